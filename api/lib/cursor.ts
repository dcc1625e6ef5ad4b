import { z } from "zod";
import { HttpError } from "./http-error.ts";

const CursorSchema = z.object({ v: z.literal(1), ts: z.number().int(), id: z.string().max(200) });
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

const KeysetSchema = z.object({
  v: z.literal(2),
  sort: z.string().max(40),
  key: z.array(z.union([z.string().max(200), z.number()])).max(4),
});

/** Opaque keyset cursor over a sort order: base64url of `{v:2, sort, key}` (`sort` names the order it was issued for). */
export function encodeKeyset(sort: string, key: (string | number)[]): string {
  return Buffer.from(JSON.stringify({ v: 2, sort, key })).toString("base64url");
}

/**
 * Decodes a keyset cursor issued for `sort`. A cursor of another sort order is translated by `rekey`
 * (its key → this order's key of the same row) when given. Throws HttpError 400 naming `cursor` when
 * it is not one of ours, has the wrong arity, or names another order that `rekey` cannot translate.
 */
export function decodeKeyset(
  text: string,
  sort: string,
  arity: number,
  rekey?: (key: (string | number)[]) => (string | number)[] | null,
): (string | number)[] {
  let c: z.infer<typeof KeysetSchema>;
  try {
    c = KeysetSchema.parse(JSON.parse(Buffer.from(text, "base64url").toString("utf8")));
  } catch {
    throw new HttpError(400, "Invalid parameter cursor: not a cursor returned by this endpoint");
  }
  if (c.sort !== sort) {
    const key = rekey?.(c.key);
    if (!key) throw new HttpError(400, `Invalid parameter cursor: issued for sort ${c.sort}, not ${sort}`);
    return key;
  }
  if (c.key.length !== arity)
    throw new HttpError(400, "Invalid parameter cursor: not a cursor returned by this endpoint");
  return c.key;
}
