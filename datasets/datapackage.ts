import { type Dataset, DATASET_FORMATS, type DatasetFormat, fieldDocsOf, MEDIA_TYPES } from "./contract.ts";
import { DATASET_SOURCES } from "./sources.ts";

/** Frictionless Table Schema field types the datasets use. */
export type TableFieldType = "string" | "integer" | "number" | "boolean" | "date" | "datetime" | "any";

/** Table Schema type of a DuckDB column type (DESCRIBE `column_type`). */
export function tableTypeOf(duckdbType: string): TableFieldType {
  const t = duckdbType.toUpperCase();
  if (t === "VARCHAR" || t === "UUID" || t === "JSON") return "string";
  if (/^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?)$/.test(t)) return "integer";
  if (t === "DOUBLE" || t === "FLOAT" || t === "REAL" || t.startsWith("DECIMAL")) return "number";
  if (t === "BOOLEAN") return "boolean";
  if (t === "DATE") return "date";
  if (t.startsWith("TIMESTAMP")) return "datetime";
  return "any";
}

/** One published file of a topic as the datapackage describes it. */
export interface DatapackageFile {
  format: DatasetFormat;
  /**
   * Path relative to `datasets/<topic>/datapackage.json`: `<YYYY-MM-DD>.<fmt>` (a dated file this build
   * published first) or `latest.<fmt>` (undated topics; a dated topic whose day an earlier build owns).
   */
  path: string;
  bytes: number;
  sha256: string;
}

/** What a datapackage is generated from: the dataset declaration, its SQL column types, the files and the build. */
export interface DatapackageInput {
  dataset: Dataset;
  /** Column → DuckDB type of the dataset's SQL (DESCRIBE). */
  columnTypes: Record<string, string>;
  rows: number;
  files: DatapackageFile[];
  asOf: number;
  buildId: string;
  /** `analytic` → version id in force. */
  methodology: { analytic: string; versionId: string }[];
  inputsSha256: string;
  /**
   * Dated topics: `this-build` when the resources are the day's dated files `<YYYY-MM-DD>.<fmt>` (this
   * build published them first), `earlier-build` when an earlier build of the same UTC day owns those
   * (write-once) and the resources are this build's `latest.<fmt>`. Absent for undated topics.
   */
  datedFiles?: "this-build" | "earlier-build";
}

/**
 * The Frictionless tabular data package of one topic (`datasets/<topic>/datapackage.json`): one
 * resource per format with path, format, mediatype, bytes, sha256 hash and row count (`rows`), the
 * table schema generated from the row schema's documented fields (types from the SQL columns),
 * primaryKey, sources and licences (shared/data/MANIFEST.md), as-of, build id and methodology.
 */
export function buildDatapackage(p: DatapackageInput) {
  const ds = p.dataset;
  const schema = {
    fields: fieldDocsOf(ds).map((f) => {
      const duckdbType = p.columnTypes[f.name];
      if (!duckdbType) throw new Error(`dataset ${ds.topic}: column ${f.name} is not in its SQL`);
      return {
        name: f.name,
        type: tableTypeOf(duckdbType),
        description: f.description,
        ...(f.unit ? { unit: f.unit } : {}),
      };
    }),
    primaryKey: ds.primaryKey,
    missingValues: [""],
  };
  const asOfISO = new Date(p.asOf * 1000).toISOString().replace(".000Z", "Z");
  const sources = ds.sources.map((id) => DATASET_SOURCES[id]);
  const licenses = sources.map((s) => ({
    ...(s.license ? { name: s.license } : {}),
    path: s.path,
    title: `${s.title}: ${s.licenceNote}`,
  }));
  const byFormat = new Map(p.files.map((f) => [f.format, f]));
  return {
    profile: "tabular-data-package",
    name: ds.topic,
    id: `ballast:${ds.topic}:${p.buildId}`,
    title: ds.title,
    description: ds.description,
    version: "1.0.0",
    created: asOfISO,
    keywords: ["stablecoins", "ballast", ds.topic],
    sources: sources.map((s) => ({ title: s.title, path: s.path, licenceNote: s.licenceNote })),
    licenses,
    licenceNote:
      "Recorded inputs come from public repositories, several without a licence file; the upstream APIs' own terms apply. Keep the source attribution next to any redistributed copy (shared/data/MANIFEST.md).",
    ballast: {
      asOf: p.asOf,
      asOfISO,
      buildId: p.buildId,
      dated: ds.dated,
      ...(p.datedFiles ? { datedFiles: p.datedFiles } : {}),
      methodology: p.methodology,
      inputsSha256: p.inputsSha256,
    },
    resources: DATASET_FORMATS.map((fmt) => {
      const f = byFormat.get(fmt);
      if (!f) throw new Error(`dataset ${ds.topic}: no ${fmt} file`);
      return {
        name: `${ds.topic}-${fmt}`,
        path: f.path,
        profile: "tabular-data-resource",
        format: fmt,
        mediatype: MEDIA_TYPES[fmt],
        ...(fmt === "parquet" ? {} : { encoding: "utf-8" }),
        ...(fmt === "csv"
          ? {
              dialect: {
                delimiter: ",",
                header: true,
                commentChar: "#",
                lineTerminator: "\n",
                quoteChar: '"',
                doubleQuote: true,
              },
            }
          : {}),
        bytes: f.bytes,
        hash: `sha256:${f.sha256}`,
        rows: p.rows,
        schema,
      };
    }),
  };
}
