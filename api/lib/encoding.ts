import { brotliCompressSync, constants, crc32, deflateRawSync, gzipSync } from "node:zlib";

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
export function compressBody(
  body: Uint8Array,
  coding: Exclude<ContentCoding, "identity">,
  stable?: StablePrefix,
): Uint8Array {
  if (coding === "br")
    return brotliCompressSync(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength },
    });
  return stable && stable.bytes > 0 && stable.bytes < body.byteLength
    ? gzipWithStablePrefix(body, stable)
    : gzipSync(body, { level: 6 });
}

/**
 * The leading `bytes` of a body that recompressing it for `key` (a response cache key) will likely
 * find unchanged: a body with a per-second `_meta` is the same up to its `,"_meta":`.
 */
export interface StablePrefix {
  key: string;
  bytes: number;
}

/** The deflated prefix kept per key: its bytes, raw deflate ending on a full flush, and CRC-32. */
interface DeflatedPrefix {
  prefix: Buffer;
  deflated: Buffer;
  crc: number;
}
const prefixes = new Map<string, DeflatedPrefix>();
/** Deflate runs of gzipWithStablePrefix since the process started: prefixes (one per key and prefix) and tails (one per body). */
export const stablePrefixDeflates = { prefixes: 0, tails: 0 };
/** Keys whose deflated prefix is kept (oldest dropped first); each holds about its body's size. */
const MAX_PREFIXES = 16;
/** The gzip member header of gzipSync: deflate, no flags, no mtime, OS Unix. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);

/**
 * gzip of `body` (one member, RFC 1952) whose first `stable.bytes` are deflated once per key and
 * prefix: raw deflate of the prefix ending on a full flush (no final block, no back-references across
 * it), then the rest deflated on its own, the CRC-32 of the whole continued from the prefix's. Any
 * gzip reader decodes it; it is a few bytes larger than gzipSync's.
 */
function gzipWithStablePrefix(body: Uint8Array, stable: StablePrefix): Buffer {
  const prefix = body.subarray(0, stable.bytes);
  let kept = prefixes.get(stable.key);
  if (!kept?.prefix.equals(prefix)) {
    stablePrefixDeflates.prefixes++;
    kept = {
      prefix: Buffer.from(prefix),
      deflated: deflateRawSync(prefix, { level: 6, finishFlush: constants.Z_FULL_FLUSH }),
      crc: crc32(prefix),
    };
    prefixes.delete(stable.key);
    if (prefixes.size >= MAX_PREFIXES) prefixes.delete(prefixes.keys().next().value as string);
    prefixes.set(stable.key, kept);
  }
  const rest = body.subarray(stable.bytes);
  stablePrefixDeflates.tails++;
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(rest, kept.crc) >>> 0, 0);
  trailer.writeUInt32LE(body.byteLength >>> 0, 4);
  return Buffer.concat([GZIP_HEADER, kept.deflated, deflateRawSync(rest, { level: 6 }), trailer]);
}
