import Papa from "papaparse";
import type { z } from "zod";

/**
 * A public dataset topic. `topic` is a never-break external id (spec 9). Rows come from `sql`
 * (marts only) and are validated against `row`. Dated topics publish
 * `datasets/<topic>/<YYYY-MM-DD>.{csv,json,ndjson}` (kept 90 days) and `latest.*`; undated ones
 * publish `datasets/<topic>.{json,csv}`.
 */
export interface Dataset {
  topic: string;
  dated: boolean;
  formats: ("csv" | "json" | "ndjson")[];
  /** Also publish `sheets/<topic>.csv`. */
  sheet: boolean;
  columns: string[];
  row: z.ZodType;
  sql: string;
  description: string;
}

/** Serialises rows in a format; column order is the dataset's. CSV via papaparse (RFC 4180 quoting). */
export function serialise(rows: Record<string, unknown>[], columns: string[], format: "csv" | "json" | "ndjson"): string {
  const ordered = rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c] ?? null])));
  if (format === "csv") return `${Papa.unparse(ordered, { columns, newline: "\n" })}\n`;
  if (format === "json") return `${JSON.stringify(ordered)}\n`;
  return ordered.map((r) => JSON.stringify(r)).join("\n") + (ordered.length ? "\n" : "");
}

/** Days a dated dataset file is kept. */
export const DATASET_RETENTION_DAYS = 90;
