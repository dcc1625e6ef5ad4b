import { dropOldest } from "../bounded-map.ts";
import { type ApiKeyRecord, KEY_CACHE_MAX } from "./records.ts";

/** One verified key kept in memory. */
export interface CacheEntry {
  record: ApiKeyRecord;
  /** Coherence epoch the verification was made under (shared mode). */
  epoch: number;
  /** Last time (app clock, ms) the store confirmed the key: a verification, or a coherent cache hit. */
  confirmedAt: number;
}

/**
 * The per-instance cache of verified standard keys (spec 5.5), by token, oldest first, at most
 * KEY_CACHE_MAX entries (the oldest goes first) and one token per key id (a rotated key's old token
 * is dropped). Whether an entry may be served is the key store's decision (cache mode, coherence
 * lease); the cache only keeps entries and counts evictions, so a verification that raced an eviction
 * is not kept.
 */
export class VerificationCache {
  /** Verified standard keys by token, oldest first; `byId` maps key id → token for eviction. */
  private readonly entries = new Map<string, CacheEntry>();
  private readonly byId = new Map<string, string>();
  private evicted = 0;

  /** Bumped by every eviction: a verification that started before and ends after one is not cached. */
  get evictions(): number {
    return this.evicted;
  }

  /** The entry of `token`, if kept. */
  get(token: string): CacheEntry | undefined {
    return this.entries.get(token);
  }

  /** Drops the entry of key `id` (if any) and counts the eviction. */
  evict(id: string): void {
    this.evicted++;
    const token = this.byId.get(id);
    if (token === undefined) return;
    this.byId.delete(id);
    this.entries.delete(token);
  }

  /** Keeps `record` as verified for `token` at `nowMs` (app clock, ms) under coherence `epoch`, newest. */
  remember(token: string, record: ApiKeyRecord, epoch: number, nowMs: number): void {
    const old = this.byId.get(record.id);
    if (old !== undefined && old !== token) this.entries.delete(old);
    this.entries.delete(token);
    if (this.entries.size >= KEY_CACHE_MAX) {
      const dropped = dropOldest(this.entries);
      if (dropped) this.byId.delete(dropped[1].record.id);
    }
    this.entries.set(token, { record, epoch, confirmedAt: nowMs });
    this.byId.set(record.id, token);
  }
}
