import type { z } from "zod";
import type { ParsedRows, RowSink } from "./types.ts";

/**
 * Upstream numbers arrive as number, numeric string or null (DefiLlama id 226 sends strings).
 * Returns a finite number, or null for null/empty; `undefined` marks a malformed value.
 */
export function toFiniteNumber(value: unknown): number | null | undefined {
  if (value === null || value === undefined || value === "") return null;
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

/**
 * Upstream amounts above this magnitude are implausible for one stablecoin data point: native
 * units of supply, or USD for USD pegs (> $10 T); such values (and non-finite ones) are dropped
 * and counted as IMPLAUSIBLE_VALUE.
 */
export const IMPLAUSIBLE_ABOVE = 1e13;

/** Drop reason for a value above IMPLAUSIBLE_ABOVE or a non-finite number (`Infinity`, `1e400`, NaN). */
export const IMPLAUSIBLE_VALUE = "implausible-value";

const NUMERIC_TEXT = /^\s*[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|Infinity|NaN)\s*$/i;

/**
 * Classifies an upstream amount (number, numeric string or null; any unit): a finite number with
 * |n| ≤ IMPLAUSIBLE_ABOVE; null for null/undefined/empty; `"implausible"` for a number (or numeric
 * text) that is non-finite or larger than IMPLAUSIBLE_ABOVE in magnitude; `"malformed"` otherwise.
 */
export function toPlausibleAmount(value: unknown): number | null | "malformed" | "implausible" {
  if (value === null || value === undefined || value === "") return null;
  let n: number;
  if (typeof value === "number") n = value;
  else if (typeof value === "string" && NUMERIC_TEXT.test(value))
    n = Number(/^\s*[-+]?nan\s*$/i.test(value) ? NaN : value.trim().replace(/^([-+]?)infinity$/i, "$1Infinity"));
  else return "malformed";
  if (!Number.isFinite(n) || Math.abs(n) > IMPLAUSIBLE_ABOVE) return "implausible";
  return n;
}

/**
 * A pool's TVL (USD, number or numeric string) checked with toPlausibleAmount: the amount when it is
 * finite, ≥ 0 and at most IMPLAUSIBLE_ABOVE; otherwise the pool is dropped on `rc` and undefined is
 * returned: `implausible-value` (IMPLAUSIBLE_VALUE) for a non-finite or too large value, `tvl-invalid`
 * for a missing, malformed or negative one. Used by the DEX pool readers (Curve, DEX subgraphs).
 */
export function poolTvlOrDrop(value: unknown, rc: RowCollector): number | undefined {
  const tvl = toPlausibleAmount(value);
  if (tvl === "implausible") rc.drop(IMPLAUSIBLE_VALUE);
  else if (tvl === null || tvl === "malformed" || tvl < 0) rc.drop("tvl-invalid");
  else return tvl;
  return undefined;
}

/** Unix seconds → `YYYY-MM-DD` of its UTC calendar day (intraday rows; daily rows use time.ts's rule). */
export function isoDay(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().slice(0, 10);
}

/**
 * Accumulates validated rows and counted drop reasons. With `out`, kept rows are handed to it as they
 * are validated instead of being accumulated (`rows` stays empty).
 */
export class RowCollector {
  readonly rows: Record<string, unknown>[] = [];
  readonly dropped: Record<string, number> = {};

  /** Key → JSON of the row kept for it (addUnique). */
  private readonly keyed = new Map<string, string>();

  constructor(
    private readonly schema: z.ZodType,
    private readonly out?: RowSink,
  ) {}

  /**
   * Like `add`, for rows whose `key` (an upstream coin id) is unique within one payload: the first row
   * of a key is kept; a repeat is dropped and counted as `duplicate-identical` when every value equals
   * the kept row's, else as `duplicate-conflicting` (the upstream gave two answers for one key; the
   * first valid one in payload order is used, and the load stage adds a manifest warning). An invalid
   * row is counted as by `add` and does not claim its key.
   */
  addUnique(key: string, row: Record<string, unknown>): void {
    const text = JSON.stringify(row);
    const kept = this.keyed.get(key);
    if (kept !== undefined) {
      this.drop(kept === text ? "duplicate-identical" : "duplicate-conflicting");
      return;
    }
    if (this.add(row)) this.keyed.set(key, text);
  }

  /** Validates `row`; keeps it (true) or counts `reason` (default: the first zod issue path) and returns false. */
  add(row: Record<string, unknown>): boolean {
    const res = this.schema.safeParse(row);
    if (!res.success) {
      this.drop(`invalid-${res.error.issues[0]?.path.join(".") || "row"}`);
      return false;
    }
    const kept = res.data as Record<string, unknown>;
    if (this.out) this.out(kept);
    else this.rows.push(kept);
    return true;
  }

  /** Counts `count` rows dropped for `reason` (kebab-case, e.g. `implausible-value`). */
  drop(reason: string, count = 1): void {
    this.dropped[reason] = (this.dropped[reason] ?? 0) + count;
  }

  result(): ParsedRows {
    return { rows: this.rows, dropped: this.dropped };
  }
}
