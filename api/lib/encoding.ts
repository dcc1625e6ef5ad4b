import { brotliCompressSync, constants, gzipSync } from "node:zlib";

/** A content coding the API sends: br and gzip, or none. */
export type ContentCoding = "br" | "gzip" | "identity";

/** Bodies smaller than this are always sent as they are (compression would not pay). */
export const MIN_COMPRESS_BYTES = 1024;

/**
 * The coding to send for an `Accept-Encoding` header: `br` when accepted, else `gzip`, else
 * identity. A coding listed with `q=0` is refused. Memoised per header value (clients send few).
 */
export function negotiate(acceptEncoding: string | undefined): ContentCoding {
  if (!acceptEncoding) return "identity";
  let c = memo.get(acceptEncoding);
  if (c === undefined) {
    const accepted = new Set<string>();
    for (const part of acceptEncoding.toLowerCase().split(",")) {
      const [name, ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      if (q === undefined || Number(q) > 0) accepted.add(name.trim());
    }
    c = accepted.has("br") ? "br" : accepted.has("gzip") || accepted.has("x-gzip") ? "gzip" : "identity";
    if (memo.size > 256) memo.clear();
    memo.set(acceptEncoding, c);
  }
  return c;
}
const memo = new Map<string, ContentCoding>();

/**
 * Compresses a response body computed at request time (bodies that embed a per-second `_meta`). Quick
 * settings (brotli quality 5, gzip level 6): the result is cached with the response, so this runs at
 * most once per URL, coding and service second. Published files use the build's precompressed siblings.
 */
export function compressBody(body: Uint8Array, coding: Exclude<ContentCoding, "identity">): Uint8Array {
  return coding === "br"
    ? brotliCompressSync(body, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength },
      })
    : gzipSync(body, { level: 6 });
}
