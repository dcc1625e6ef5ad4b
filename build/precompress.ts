import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import type { StoredEncoding } from "../site-data/manifest.ts";

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Encodings stored beside every compressible published file, in manifest order. */
export const STORED_ENCODINGS: readonly StoredEncoding[] = ["br", "gzip"];

/** Key suffix of each stored encoding: `<key>.br`, `<key>.gz` (the API serves these exact keys). */
export const ENCODING_SUFFIX: Record<StoredEncoding, string> = { br: ".br", gzip: ".gz" };

/** Files stored with precompressed siblings: JSON, CSV and NDJSON. */
export function isCompressible(key: string): boolean {
  return /\.(json|csv|ndjson)$/.test(key);
}

/** Bodies above this size are compressed at quick settings (see brotliQuality, gzipLevel). */
const LARGE_BODY_BYTES = 256 * 1024;

/**
 * Brotli quality for a body of `bytes`: 10 up to 256 KiB (almost every file: per-coin and per-chain
 * site-data, small datasets), 5 above. Measured on the recorded build (919 bodies, 15 MB): quality 11 everywhere
 * costs ~24 s of CPU (~18 s of it on the two multi-MB source-quality exports) and 10 everywhere ~5 s,
 * both over the ~3 s budget; this split costs ~1.3 s, and above 256 KiB qualities 5–9 give about the
 * same size as 5.
 */
export function brotliQuality(bytes: number): number {
  return bytes <= LARGE_BODY_BYTES ? 10 : 5;
}

/**
 * Gzip level for a body of `bytes`: 9 up to 256 KiB, 6 above. Measured on the 42 bodies above 256 KiB of a
 * build at 10× the recorded history (372 MB): level 9 costs 4.0 s of CPU for 29.2 MB, level 6 1.7 s for
 * 29.9 MB (+2.3%); below 256 KiB the two differ by ~10 ms in all.
 */
export function gzipLevel(bytes: number): number {
  return bytes <= LARGE_BODY_BYTES ? 9 : 6;
}

/**
 * The stored encodings of one body (brotli at brotliQuality with a size hint; gzip at gzipLevel, header
 * mtime 0). Deterministic: the same body always gives the same bytes. Runs on the libuv thread pool.
 */
export async function encodeBody(body: string | Uint8Array): Promise<Record<StoredEncoding, Uint8Array>> {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  const [br, gzipped] = await Promise.all([
    brotliAsync(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: brotliQuality(bytes.byteLength),
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength,
      },
    }),
    gzipAsync(bytes, { level: gzipLevel(bytes.byteLength) }),
  ]);
  return { br, gzip: gzipped };
}
