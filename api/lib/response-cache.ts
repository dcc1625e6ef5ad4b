import type { ContentCoding } from "./encoding.ts";
import type { CacheProfile } from "./freshness.ts";

/** Body bytes per content coding: identity always, br/gzip once a request asked for them. */
export type CodedBodies = { identity: Uint8Array } & Partial<Record<Exclude<ContentCoding, "identity">, Uint8Array>>;

/**
 * A finished read response: body bytes per content coding (identity always; br/gzip added on first
 * request for them), plain headers without CORS, and what it is valid for: one build, and one
 * service second when its body or headers depend on the time.
 */
export interface CachedResponse {
  buildId: string | null;
  /** Service second the headers (data age) were computed for. */
  nowSec: number;
  /** The body embeds `_meta` (time-dependent): recompute every second, not only the headers. */
  timeDependent: boolean;
  dataAsOf: number | null;
  /** Always `Cache-Control: no-store` (a held publication), whatever the freshness. */
  noStore?: boolean;
  /** Per-response Cache-Control profile overriding the route's (RouteResult.cacheProfile). */
  cacheProfile?: CacheProfile;
  /** The published file the body is, byte for byte (its stored br/gzip siblings can be sent). */
  file?: string;
  headers: Record<string, string>;
  bodies: CodedBodies;
  /** Response header objects per coding, merged with the CORS headers object they were made for. */
  sent?: { cors: Record<string, string>; byCoding: Partial<Record<ContentCoding, Record<string, string>>> };
}

/**
 * Finished responses of the read routes, keyed by normalised URL (route + validated parameters in
 * a fixed order), under ONE byte budget for the whole process. Inserting past the budget evicts the
 * oldest entries first (FIFO; a hit does not reorder, keeping hits free of bookkeeping).
 */
export class ResponseCache {
  private readonly entries = new Map<string, CachedResponse>();
  private bytes = 0;

  constructor(readonly maxBytes = 16 * 1024 * 1024) {}

  get(key: string): CachedResponse | undefined {
    return this.entries.get(key);
  }

  /** Stores or replaces `key`; entries larger than an eighth of the budget are not kept. */
  set(key: string, entry: CachedResponse): void {
    this.delete(key);
    const size = sizeOf(key, entry);
    if (size > this.maxBytes / 8) return;
    while (this.bytes + size > this.maxBytes && this.entries.size) {
      const [oldest] = this.entries.keys();
      this.delete(oldest);
    }
    this.entries.set(key, entry);
    this.bytes += size;
  }

  /** Adds a coding's body to a stored entry, counting its bytes. */
  addBody(key: string, entry: CachedResponse, coding: ContentCoding, body: Uint8Array): void {
    entry.bodies[coding] = body;
    if (this.entries.get(key) === entry) this.bytes += body.byteLength;
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.bytes -= sizeOf(key, e);
  }

  /** Bytes held and entry count (for tests and the bench). */
  stats(): { bytes: number; entries: number } {
    return { bytes: this.bytes, entries: this.entries.size };
  }
}

function sizeOf(key: string, e: CachedResponse): number {
  let n = key.length + 512;
  for (const b of Object.values(e.bodies)) if (b) n += b.byteLength;
  return n;
}
