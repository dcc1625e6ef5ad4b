import Papa from "papaparse";
import type { z } from "zod";
import type { SourceId } from "./sources.ts";

/** Formats every dataset topic is published in (Parquet written by DuckDB `COPY … (FORMAT PARQUET)`). */
export const DATASET_FORMATS = ["csv", "json", "ndjson", "parquet"] as const;
export type DatasetFormat = (typeof DATASET_FORMATS)[number];
/** Text formats, serialised in TS from the rows. */
export type TextFormat = Exclude<DatasetFormat, "parquet">;

/** Media type of each published format (the API serves these `Content-Type`s; the datapackage names them). */
export const MEDIA_TYPES: Record<DatasetFormat, string> = {
  csv: "text/csv",
  json: "application/json",
  ndjson: "application/x-ndjson",
  parquet: "application/vnd.apache.parquet",
};

/** Units a dataset field may carry (datapackage `unit`; also said in the description). */
export type FieldUnit =
  | "USD"
  | "bps"
  | "Unix seconds"
  | "seconds"
  | "token units"
  | "base units"
  | "score 0-100"
  | "ISO 8601 UTC"
  | "UTC day";

/** Documentation of one dataset column: zod metadata of the row schema's field (set with {@link doc}). */
export interface FieldDoc {
  description: string;
  unit?: FieldUnit;
}

/**
 * Documents a row-schema field once: the description (with units) and unit land in the zod
 * metadata, from which the datapackage's table schema is generated.
 */
export function doc<T extends z.ZodType>(schema: T, description: string, unit?: FieldUnit): T {
  return schema.meta({ description, ...(unit ? { unit } : {}) }) as T;
}

/**
 * A public dataset topic. `topic` is a never-break external id (spec 9). Rows come from `sql`
 * (marts only) and are validated against `row`; every field of `row` is documented with {@link doc}.
 * Every topic is published in every {@link DATASET_FORMATS} format plus `datasets/<topic>/datapackage.json`.
 * Dated topics publish `datasets/<topic>/<YYYY-MM-DD>.{csv,json,ndjson,parquet}` (kept 90 days; served
 * as `latest.*` too); undated ones publish `datasets/<topic>.{csv,json,ndjson,parquet}`.
 */
export interface Dataset {
  topic: string;
  title: string;
  dated: boolean;
  /** Also publish `sheets/<topic>.csv` (no comment line: spreadsheets do not skip it). */
  sheet: boolean;
  columns: string[];
  /** Columns unique per row (datapackage `primaryKey`). */
  primaryKey: string[];
  /** Upstreams the rows derive from (datasets/sources.ts; licence notes from shared/data/MANIFEST.md). */
  sources: SourceId[];
  /** Analytics (`pipelines/analytics/changelogs/<analytic>.md`) whose versions the rows follow. */
  methodologies: string[];
  row: z.ZodObject;
  sql: string;
  description: string;
}

/** The documented fields of a dataset, in column order; throws naming the field when one has no description. */
export function fieldDocsOf(ds: Pick<Dataset, "topic" | "columns" | "row">): (FieldDoc & { name: string })[] {
  return ds.columns.map((name) => {
    const field = ds.row.shape[name] as z.ZodType | undefined;
    const meta = field?.meta() as Partial<FieldDoc> | undefined;
    const description = meta?.description ?? field?.description;
    if (!description) throw new Error(`dataset ${ds.topic}: field ${name} has no description (document it with doc())`);
    return { name, description, ...(meta?.unit ? { unit: meta.unit } : {}) };
  });
}

/**
 * The provenance comment line that starts every dataset CSV (without newline). It names the as-of,
 * methodology versions and the sha256 of the build's inputs, not the build id: the build id is a
 * hash of the published files, so a CSV cannot contain it.
 */
export function csvProvenance(p: { topic: string; asOf: number; methodology: string[]; inputsSha256: string }): string {
  const asOf = new Date(p.asOf * 1000).toISOString().replace(".000Z", "Z");
  return `# ballast dataset ${p.topic} as-of ${asOf} methodology ${p.methodology.length ? p.methodology.join(",") : "none"} inputs sha256:${p.inputsSha256}`;
}

/**
 * Serialises rows in a text format; column order is the dataset's. CSV via papaparse (RFC 4180
 * quoting), preceded by `comment` (one `#` line) when given.
 */
export function serialise(
  rows: Record<string, unknown>[],
  columns: string[],
  format: TextFormat,
  comment?: string,
): string {
  const ordered = rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c] ?? null])));
  if (format === "csv") return `${comment ? `${comment}\n` : ""}${Papa.unparse(ordered, { columns, newline: "\n" })}\n`;
  if (format === "json") return `${JSON.stringify(ordered)}\n`;
  return ordered.map((r) => JSON.stringify(r)).join("\n") + (ordered.length ? "\n" : "");
}

/** Days a dated dataset file is kept. */
export const DATASET_RETENTION_DAYS = 90;
