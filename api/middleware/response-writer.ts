import { type ContentCoding, MIN_COMPRESS_BYTES, negotiate } from "../lib/encoding.ts";
import type { CachedResponse, SentHeaders } from "../lib/response-cache.ts";

/**
 * The response writer shared by the app and the Node fast path: which coding a cached response is
 * sent in, its finished headers (a plain object for the app's Response, no undici Headers; Node's flat
 * list for the fast path), and the 304 of a matching `If-None-Match`. Finished headers are reused per
 * entry while its CORS object and headers stay the same.
 */

/** Coding to send `entry` in for `acceptEncoding`: identity below MIN_COMPRESS_BYTES, else the negotiated one. */
export function codingFor(entry: CachedResponse, acceptEncoding: string | undefined): ContentCoding {
  return entry.bodies.identity.byteLength >= MIN_COMPRESS_BYTES ? negotiate(acceptEncoding) : "identity";
}

/**
 * Finished headers of `entry` sent as `coding` with `body`: CORS, the entry's headers, Content-Encoding
 * and Content-Length, as an object (for a web Response) and as Node's flat header list (name, value,
 * name, value, …: `ServerResponse.writeHead` stores a list without listing an object's keys). Made
 * once per entry, CORS object and coding.
 */
function finishedHeaders(
  entry: CachedResponse,
  cors: Record<string, string>,
  coding: ContentCoding,
  body: Uint8Array,
): SentHeaders {
  if (entry.sent?.cors !== cors) entry.sent = { cors, byCoding: {} };
  const made = entry.sent.byCoding[coding];
  if (made) return made;
  const object =
    coding === "identity"
      ? { ...cors, ...entry.headers, "Content-Length": String(body.byteLength) }
      : { ...cors, ...entry.headers, "Content-Encoding": coding, "Content-Length": String(body.byteLength) };
  const sent = { object, list: Object.entries(object).flat() };
  entry.sent.byCoding[coding] = sent;
  return sent;
}

/** finishedHeaders as an object (for the app's web Response). */
export function sentHeaders(
  entry: CachedResponse,
  cors: Record<string, string>,
  coding: ContentCoding,
  body: Uint8Array,
): Record<string, string> {
  return finishedHeaders(entry, cors, coding, body).object;
}

/** finishedHeaders as Node's flat list (for `ServerResponse.writeHead` on the fast path). */
export function sentHeaderList(
  entry: CachedResponse,
  cors: Record<string, string>,
  coding: ContentCoding,
  body: Uint8Array,
): string[] {
  return finishedHeaders(entry, cors, coding, body).list;
}

/** Headers of a 304 when `ifNoneMatch` lists the entry's ETag (strong or `W/`), else null. */
export function notModifiedHeaders(
  entry: CachedResponse,
  ifNoneMatch: string | undefined,
  cors: Record<string, string>,
): Record<string, string> | null {
  const etag = entry.headers.ETag;
  if (!etag || !ifNoneMatch?.split(",").some((t) => t.trim() === etag || t.trim() === `W/${etag}`)) return null;
  const { "Content-Type": _type, ...rest } = entry.headers;
  return { ...cors, ...rest };
}
