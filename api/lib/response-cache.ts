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
  /** Leading bytes of the identity body that do not depend on the time (before its `_meta`), when it has one. */
  stablePrefixBytes?: number;
  /** Response headers per coding, merged with the CORS headers object they were made for. */
  sent?: { cors: Record<string, string>; byCoding: Partial<Record<ContentCoding, SentHeaders>> };
}

/** A cached response's finished headers in one coding: as an object and as Node's flat list of the same pairs. */
export interface SentHeaders {
  object: Record<string, string>;
  /** name, value, name, value, … (`ServerResponse.writeHead`'s list form). */
  list: string[];
}

/** Default byte budget of the response cache (`RESPONSE_CACHE_MIB`, 16 MiB). */
export const DEFAULT_RESPONSE_CACHE_BYTES = 16 * 1024 * 1024;
/** Bytes an entry is charged beyond its key and bodies (its header objects). */
const ENTRY_OVERHEAD_BYTES = 512;
/** Bytes a request URL known for an entry is charged beyond its length. */
const URL_OVERHEAD_BYTES = 64;
/** The admission filter has 2^DOORKEEPER_BITS slots of one 32-bit key hash each (256 KiB). */
const DOORKEEPER_BITS = 16;

interface Stored<R> {
  entry: CachedResponse;
  bytes: number;
  /** Request URLs (path and query as sent) known to answer with this entry, and what they were for. */
  urls: Map<string, R>;
}

/** A request URL known to answer with a stored entry: the entry's key, the entry, and what `alias` kept with the URL. */
export interface UrlLink<R> {
  readonly key: string;
  readonly entry: CachedResponse;
  readonly tag: R;
}

/**
 * Finished responses of the read routes, keyed by normalised URL (route + validated parameters in
 * a fixed order), under ONE byte budget for the whole process: bodies, keys, the request URLs known
 * to map to an entry (`alias`, for the Node fast path; `R` is what the caller keeps with such a URL)
 * and a fixed overhead per entry. Inserting past the budget evicts the oldest entries first (FIFO; a
 * hit does not reorder, keeping hits free of bookkeeping), with their URLs.
 *
 * Admission (`admit`): a response is stored from the second time its key is asked for, so a stream
 * of one-off URLs (a crawler) does not churn the hot set out, nor pile up evicted bodies for the
 * garbage collector. The filter remembers one 32-bit hash per slot of a fixed table (256 KiB), so a
 * key is forgotten once another lands in its slot.
 */
export class ResponseCache<R = unknown> {
  private readonly entries = new Map<string, Stored<R>>();
  /** Known request URLs, each linked to the entry stored now for its key (relinked when the key is stored again). */
  private readonly byUrl = new Map<string, UrlLink<R>>();
  private readonly seen = new Uint32Array(1 << DOORKEEPER_BITS);
  private bytes = 0;

  /** @param maxBytes byte budget (default 16 MiB). */
  constructor(readonly maxBytes = DEFAULT_RESPONSE_CACHE_BYTES) {}

  get(key: string): CachedResponse | undefined {
    return this.entries.get(key)?.entry;
  }

  /**
   * The entry a request URL (path and query as sent) was answered with, and what `alias` kept with the
   * URL; undefined when the URL is unknown or its entry was evicted.
   */
  lookup(url: string): UrlLink<R> | undefined {
    return this.byUrl.get(url);
  }

  /**
   * Whether a response for `key` should be stored now: true when it is stored (a replacement) or was
   * asked for before (an earlier call for it, not yet overwritten in the filter); otherwise remembers it.
   */
  admit(key: string): boolean {
    if (this.entries.has(key)) return true;
    let h = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    const slot = h >>> (32 - DOORKEEPER_BITS);
    h = (h | 1) >>> 0; // 0 marks an empty slot
    if (this.seen[slot] === h) return true;
    this.seen[slot] = h;
    return false;
  }

  /**
   * Stores or replaces `key` (a replaced entry's URLs stay known); entries larger than an eighth of the
   * budget are not kept.
   */
  set(key: string, entry: CachedResponse): void {
    const old = this.entries.get(key);
    this.delete(key);
    let size = key.length + ENTRY_OVERHEAD_BYTES;
    for (const b of Object.values(entry.bodies)) size += b?.byteLength ?? 0;
    if (size > this.maxBytes / 8) return;
    const urls = new Map<string, R>();
    if (old)
      for (const [url, tag] of old.urls) {
        urls.set(url, tag);
        this.byUrl.set(url, { key, entry, tag });
        size += url.length + URL_OVERHEAD_BYTES;
      }
    this.entries.set(key, { entry, bytes: size, urls });
    this.bytes += size;
    this.trim();
  }

  /** Records that request URL `url` is answered by the stored entry `key` (with `tag`); no-op when `key` is not stored. */
  alias(url: string, key: string, tag: R): void {
    const s = this.entries.get(key);
    if (!s || s.urls.has(url)) return;
    const other = this.byUrl.get(url);
    if (other !== undefined) this.unalias(url, other.key);
    s.urls.set(url, tag);
    this.byUrl.set(url, { key, entry: s.entry, tag });
    const size = url.length + URL_OVERHEAD_BYTES;
    s.bytes += size;
    this.bytes += size;
    this.trim();
  }

  /** Adds a coding's body to a stored entry, counting its bytes. */
  addBody(key: string, entry: CachedResponse, coding: ContentCoding, body: Uint8Array): void {
    entry.bodies[coding] = body;
    const s = this.entries.get(key);
    if (s?.entry !== entry) return;
    s.bytes += body.byteLength;
    this.bytes += body.byteLength;
    this.trim();
  }

  delete(key: string): void {
    const s = this.entries.get(key);
    if (!s) return;
    this.entries.delete(key);
    this.bytes -= s.bytes;
    for (const url of s.urls.keys()) if (this.byUrl.get(url)?.key === key) this.byUrl.delete(url);
  }

  /** Bytes held, entry count and known request URLs (for tests and the bench). */
  stats(): { bytes: number; entries: number; urls: number } {
    return { bytes: this.bytes, entries: this.entries.size, urls: this.byUrl.size };
  }

  private unalias(url: string, key: string): void {
    const s = this.entries.get(key);
    if (s?.urls.delete(url)) {
      const size = url.length + URL_OVERHEAD_BYTES;
      s.bytes -= size;
      this.bytes -= size;
    }
    this.byUrl.delete(url);
  }

  /** Evicts the oldest entries while over budget. */
  private trim(): void {
    while (this.bytes > this.maxBytes && this.entries.size) this.delete(this.entries.keys().next().value as string);
  }
}
