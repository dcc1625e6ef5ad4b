/**
 * A map under a byte budget (and optionally an entry count): every entry is charged the bytes its
 * owner states, and inserting or growing past the budget drops the least recently used entries first
 * (a hit moves an entry to the back). An entry whose own size is above the budget is not kept.
 */
export class ByteLru<K, V> {
  private readonly entries = new Map<K, { value: V; bytes: number }>();
  private total = 0;

  /**
   * @param maxBytes byte budget of all entries together.
   * @param maxEntries entry count bound (default none: bytes only).
   */
  constructor(
    readonly maxBytes: number,
    readonly maxEntries = Number.POSITIVE_INFINITY,
  ) {
    if (!(maxBytes >= 0)) throw new RangeError(`ByteLru maxBytes must be ≥ 0 (got ${maxBytes})`);
  }

  /** The value of `key` (now the most recently used), or undefined. */
  get(key: K): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /**
   * Stores `value` under `key` charged `bytes` (replacing what was there), dropping the least recently
   * used entries while over budget. Returns false, keeping nothing, when `bytes` alone exceed the budget.
   */
  set(key: K, value: V, bytes: number): boolean {
    this.delete(key);
    if (bytes > this.maxBytes) return false;
    this.entries.set(key, { value, bytes });
    this.total += bytes;
    this.trim();
    return true;
  }

  /**
   * Charges `bytes` to `key` when it still holds `value` (a size known only later, such as a read
   * that was in flight); drops it when that alone is above the budget. No-op otherwise.
   */
  resize(key: K, value: V, bytes: number): void {
    const e = this.entries.get(key);
    if (!e || e.value !== value) return;
    if (bytes > this.maxBytes) {
      this.delete(key);
      return;
    }
    this.total += bytes - e.bytes;
    e.bytes = bytes;
    this.trim(key);
  }

  /** Drops `key` when it still holds `value` (any value when `value` is not given). */
  delete(key: K, ...value: [V] | []): void {
    const e = this.entries.get(key);
    if (!e || (value.length && e.value !== value[0])) return;
    this.entries.delete(key);
    this.total -= e.bytes;
  }

  /** Bytes charged and entry count. */
  stats(): { bytes: number; entries: number } {
    return { bytes: this.total, entries: this.entries.size };
  }

  /** Drops least recently used entries (never `keep`) until within both bounds. */
  private trim(keep?: K): void {
    for (const [k, e] of this.entries) {
      if (this.total <= this.maxBytes && this.entries.size <= this.maxEntries) return;
      if (k === keep) continue;
      this.entries.delete(k);
      this.total -= e.bytes;
    }
  }
}
