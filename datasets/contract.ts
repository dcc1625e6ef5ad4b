import Papa from "papaparse";
import type { z } from "zod";
import { columnDocOf } from "./table-docs.ts";
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
  | "UTC day"
  | "ratio 0-1"
  | "percent 0-100"
  | "days";

/** Documentation of one column: its description (meaning, unit, source where it differs) and unit. */
export interface FieldDoc {
  description: string;
  unit?: FieldUnit;
}

/**
 * Where a dataset field comes from. `column` (`table.column` of `ballast.duckdb`): the field is that
 * column's value (at most cast or renamed) and its documentation IS the column's declaration in
 * datasets/table-docs.ts. `derivedFrom`: the field is computed from those columns (formatted, joined,
 * extracted from JSON; empty for a constant) and documents itself.
 */
export type FieldLineage = { column: string } | { derivedFrom: string[] };

/**
 * Documents a row-schema field copied from the published column `table`.`column`: its description
 * and unit are the column's `COMMENT ON COLUMN` declaration (datasets/table-docs.ts), so a datapackage
 * field and the DuckDB column it comes from read the same. Throws when the column has no declaration.
 */
export function fromColumn<T extends z.ZodType>(schema: T, table: string, column: string): T {
  return schema.meta({ ...columnDocOf(table, column), column: `${table}.${column}` }) as T;
}

/**
 * Documents a row-schema field computed from published columns (`table.column`, none for a
 * constant): the description (with units) and unit are its own, the columns its lineage.
 */
export function derived<T extends z.ZodType>(schema: T, from: string[], description: string, unit?: FieldUnit): T {
  return schema.meta({ description, ...(unit ? { unit } : {}), derivedFrom: from }) as T;
}

/**
 * A public dataset topic. `topic` is a never-break external id (spec 9). Rows come from `sql`
 * (marts only) and are validated against `row`; every field of `row` is documented with {@link fromColumn}
 * (copied from a published column) or {@link derived}.
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

/**
 * The documented fields of a dataset, in column order, with their lineage; throws naming the field
 * when one is not documented with {@link fromColumn} or {@link derived}.
 */
export function fieldDocsOf(
  ds: Pick<Dataset, "topic" | "columns" | "row">,
): (FieldDoc & FieldLineage & { name: string })[] {
  return ds.columns.map((name) => {
    const field = ds.row.shape[name] as z.ZodType | undefined;
    const meta = field?.meta() as (Partial<FieldDoc> & { column?: string; derivedFrom?: string[] }) | undefined;
    const lineage: FieldLineage | null = meta?.column
      ? { column: meta.column }
      : meta?.derivedFrom
        ? { derivedFrom: meta.derivedFrom }
        : null;
    if (!meta?.description || !lineage)
      throw new Error(`dataset ${ds.topic}: field ${name} is not documented (use fromColumn() or derived())`);
    return { name, description: meta.description, ...(meta.unit ? { unit: meta.unit } : {}), ...lineage };
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
