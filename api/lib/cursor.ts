import { z } from "zod";
import { HttpError } from "./http-error.ts";

const CursorSchema = z.object({ v: z.literal(1), ts: z.number().int(), id: z.string().max(64) });
/** Position of a keyset cursor: the last row's sort time (Unix s) and id (as string). */
export type CursorPosition = z.infer<typeof CursorSchema>;

/** Opaque keyset cursor: base64url of `{v:1, ts, id}`. */
export function encodeCursor(ts: number, id: string): string {
  return Buffer.from(JSON.stringify({ v: 1, ts, id })).toString("base64url");
}

/** Decodes a cursor; throws HttpError 400 naming `cursor` when it is not one of ours. */
export function decodeCursor(text: string): CursorPosition {
  try {
    return CursorSchema.parse(JSON.parse(Buffer.from(text, "base64url").toString("utf8")));
  } catch {
    throw new HttpError(400, "Invalid parameter cursor: not a cursor returned by this endpoint");
  }
}
