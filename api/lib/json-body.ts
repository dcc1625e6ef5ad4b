import type { z } from "zod";
import { HttpError } from "./http-error.ts";

/**
 * A write route's JSON body checked against `schema` (bytes as read by `readBody`, which already
 * enforced the byte cap). `emptyOk`: an empty body reads as `{}`.
 * @throws HttpError 400 `Invalid JSON body`; `Invalid body: unknown field <names>`; `Invalid field
 * <path>: <what>` for the first failing field (no state is touched before this passes).
 */
export function parseJsonBody<T>(bytes: Uint8Array, schema: z.ZodType<T>, opts: { emptyOk?: boolean } = {}): T {
  const text = Buffer.from(bytes).toString("utf8");
  let value: unknown = {};
  if (!(opts.emptyOk && text.trim() === "")) {
    try {
      value = JSON.parse(text);
    } catch {
      throw new HttpError(400, "Invalid JSON body");
    }
  }
  return validBody(value, schema);
}

/**
 * A parsed write body (JSON, or the fields of a form post) checked against `schema`.
 * @throws HttpError 400 `Invalid body: unknown field <names>`; `Invalid field <path>: <what>` for the first failing field.
 */
export function validBody<T>(value: unknown, schema: z.ZodType<T>): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  if (issue.code === "unrecognized_keys")
    throw new HttpError(400, `Invalid body: unknown field ${issue.keys.join(", ")}`);
  const path = issue.path.join(".");
  throw new HttpError(400, path ? `Invalid field ${path}: ${issue.message}` : `Invalid body: ${issue.message}`);
}
