import type { z } from "zod";
import type { ParsedRows } from "./types.ts";

/**
 * Upstream numbers arrive as number, numeric string or null (DefiLlama id 226 sends strings).
 * Returns a finite number, or null for null/empty; `undefined` marks a malformed value.
 */
export function toFiniteNumber(value: unknown): number | null | undefined {
  if (value === null || value === undefined || value === "") return null;
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

/** Unix seconds → `YYYY-MM-DD` (UTC). */
export function isoDay(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().slice(0, 10);
}

/** `YYYY-MM-DD` or ISO timestamp → Unix seconds (UTC). NaN when unparseable. */
export function toUnixSeconds(text: string): number {
  const t = /^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text;
  return Math.floor(Date.parse(t) / 1000);
}

/** Accumulates validated rows and counted drop reasons. */
export class RowCollector {
  readonly rows: Record<string, unknown>[] = [];
  readonly dropped: Record<string, number> = {};

  constructor(private readonly schema: z.ZodType) {}

  /** Validates `row`; keeps it or counts `reason` (default: the first zod issue path). */
  add(row: Record<string, unknown>): void {
    const res = this.schema.safeParse(row);
    if (res.success) this.rows.push(res.data as Record<string, unknown>);
    else this.drop(`invalid-${res.error.issues[0]?.path.join(".") || "row"}`);
  }

  drop(reason: string, count = 1): void {
    this.dropped[reason] = (this.dropped[reason] ?? 0) + count;
  }

  result(): ParsedRows {
    return { rows: this.rows, dropped: this.dropped };
  }
}
