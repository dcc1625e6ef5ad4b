import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Papa from "papaparse";
import { Db } from "../../build/duckdb.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { buildCaptureAsOf, buildRecorded, RECORDED_AS_OF } from "./build-once.ts";

/**
 * As-of audit (issue 17): nothing observed or dated after a build's as-of may reach a published file
 * or a table of its `ballast.duckdb`. The scan is independent of the pipeline code: it reads the
 * published bytes and the DuckDB catalog, and looks for
 * - ISO dates / timestamps (`YYYY-MM-DD`, `YYYY-MM-DDThh:mm[:ss][Z]`) later than as-of, in any string
 *   (JSON value, CSV cell, VARCHAR column, JSON text inside a VARCHAR column);
 * - DATE / TIMESTAMP columns later than as-of;
 * - integers under time-like names (`*_at`, `*_ts`, `ts`, `observed*`, `date*`, camelCase `…At`,
 *   `…Ts`, `…Date`, `…Time`) holding Unix seconds (1e9–1e11) or milliseconds (1e12–1e14) later than as-of.
 * A DATE `D` (or date string) stands for the instant D 00:00Z, so it is late when D > the as-of day.
 */

/** A build made for an audit: the data dir, the build folder and its manifest. */
export interface AuditBuild {
  dir: string;
  buildDir: string;
  manifest: BuildManifest;
}

/**
 * Builds the recorded capture as of `day` (`YYYY-MM-DD`, 00:00Z) into a fresh temp dir (no warehouse:
 * the build's own `ballast.duckdb` is what the audit scans): a copy of the suite's one build of that
 * as-of (buildCaptureAsOf of test/helpers/build-once.ts, shared with the other files that build it);
 * the recorded day (RECORDED_AS_OF) is a copy of the suite's build of that day, a first build whose
 * warehouse held nothing before it. Throws whatever the build throws.
 */
export async function buildAsOfDay(day: string, prefix = "ballast-asof-"): Promise<AuditBuild> {
  process.env.BALLAST_LOG = "silent";
  const asOf = Date.parse(`${day}T00:00:00Z`) / 1000;
  const { dir, manifest } =
    asOf === RECORDED_AS_OF ? await buildRecorded(prefix) : await buildCaptureAsOf(asOf, prefix);
  return { dir, buildDir: join(dir, "builds", manifest.buildId), manifest };
}

/**
 * Keys (JSON keys, CSV headers or DuckDB columns) whose values are forward-looking by definition,
 * not observations. Keep this tiny; each entry says why.
 */
export const FORWARD_LOOKING_KEYS: Record<string, string> = {
  expiresAt: "a pending incident's expiry: first-seen + the confirmation window, a deadline not an observation",
  expires_at: "same as expiresAt (depeg_pending column)",
  backstopAt: "the resolver's scheduled backstop lock time (startedAt + 72 h), a deadline not an observation",
};

/**
 * JSON paths (dot/bracket path with array indexes replaced by `[]`, in one file) that describe the
 * inputs rather than the data: a recorded archive's recording date is after as-of for any
 * historical build, and only its rows dated ≤ as-of are loaded (docs/build.md, "Captures").
 */
export const INPUT_METADATA_PATHS: Record<string, string> = {
  "manifest.json .sources[].captures[].observedAt":
    "recording time of a history archive (rows after as-of are not loaded)",
  "manifest.json .sources[].newestObservedAt": "newest recording time of the history archives above",
  "manifest.json .sources[].captures[].path":
    "a recorded file's name (binance-vision USDCUSDT-1m-2023-03-11.csv), listed whether or not any row is ≤ as-of",
};

const SNAKE_TIME = /(^|_)(at|ts|date|time|timestamp)$/;
const CAMEL_TIME = /[a-z0-9](At|Ts|Date|Time|Timestamp)$/;
const PREFIX_TIME = /^(observed|date)/i;
/** A key that names an instant or a day (see the module doc). */
export const isTimeKey = (key: string) => SNAKE_TIME.test(key) || CAMEL_TIME.test(key) || PREFIX_TIME.test(key);

const ISO = /\b(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?)?/g;

/** Checks as-of `asOf` (Unix s, expected at 00:00Z or later). */
export class AsOfChecker {
  readonly asOfDay: string;
  constructor(readonly asOf: number) {
    this.asOfDay = new Date(asOf * 1000).toISOString().slice(0, 10);
  }

  /** Every ISO date/timestamp inside `s` later than as-of. */
  lateIsoIn(s: string): string[] {
    const out: string[] = [];
    for (const m of s.matchAll(ISO)) {
      const [text, day, time, zone] = m;
      if (day > this.asOfDay) {
        out.push(text);
        continue;
      }
      if (day === this.asOfDay && time) {
        const t = Date.parse(`${day}T${time}${zone ?? "Z"}`) / 1000;
        if (t > this.asOf) out.push(text);
      }
    }
    return out;
  }

  /** A Unix seconds or milliseconds value later than as-of; other magnitudes are not instants. */
  lateNumber(n: number): boolean {
    if (n >= 1e9 && n < 1e11) return n > this.asOf;
    if (n >= 1e12 && n < 1e14) return n > this.asOf * 1000;
    return false;
  }

  /** Late values in a parsed JSON value, as `path=value` (path with real indexes). */
  lateInJson(value: unknown, file: string, path = "", key = ""): string[] {
    if (Array.isArray(value)) return value.flatMap((v, i) => this.lateInJson(v, file, `${path}[${i}]`, key));
    if (value && typeof value === "object") {
      return Object.entries(value).flatMap(([k, v]) => this.lateInJson(v, file, `${path}.${k}`, k));
    }
    if (key in FORWARD_LOOKING_KEYS || `${file} ${path.replace(/\[\d+\]/g, "[]")}` in INPUT_METADATA_PATHS) return [];
    if (typeof value === "string") return this.lateIsoIn(value).map((x) => `${path}=${x}`);
    if (typeof value === "number" && isTimeKey(key) && this.lateNumber(value)) return [`${path}=${value}`];
    return [];
  }

  /** Late cells of a CSV text (header row first; a leading `#` provenance line skipped), as `line:column=value`. */
  lateInCsv(text: string): string[] {
    const parsed = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true, comments: "#" });
    const out: string[] = [];
    parsed.data.forEach((row, i) => {
      for (const [col, cell] of Object.entries(row)) {
        if (col in FORWARD_LOOKING_KEYS || typeof cell !== "string") continue;
        for (const x of this.lateIsoIn(cell)) out.push(`${i + 2}:${col}=${x}`);
        if (isTimeKey(col) && /^\d+$/.test(cell) && this.lateNumber(Number(cell))) out.push(`${i + 2}:${col}=${cell}`);
      }
    });
    return out;
  }
}

const walk = (d: string): string[] =>
  readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : [join(d, f)]));

/** Published json/ndjson/csv files of a build folder (not their .br/.gz encodings), relative paths. */
export function publishedDataFiles(buildDir: string): string[] {
  return walk(buildDir)
    .map((f) => f.slice(buildDir.length + 1))
    .filter((f) => /\.(json|ndjson|csv)$/.test(f))
    .sort();
}

/** Late values of every published json/ndjson/csv file of `buildDir`, as `file location=value`. */
export function auditPublishedFiles(buildDir: string, asOf: number): { files: number; late: string[] } {
  const c = new AsOfChecker(asOf);
  const files = publishedDataFiles(buildDir);
  const late: string[] = [];
  for (const rel of files) {
    const text = readFileSync(join(buildDir, rel), "utf8");
    if (rel.endsWith(".ndjson")) {
      for (const [i, line] of text.split("\n").filter(Boolean).entries())
        late.push(...c.lateInJson(JSON.parse(line), rel, `[${i}]`).map((x) => `${rel} ${x}`));
    } else if (rel.endsWith(".json")) {
      late.push(...c.lateInJson(JSON.parse(text), rel).map((x) => `${rel} ${x}`));
    } else {
      late.push(...c.lateInCsv(text).map((x) => `${rel} ${x}`));
    }
  }
  return { files: files.length, late };
}

const tryJson = (s: string): unknown => {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
};
const quoteId = (s: string) => `"${s.replace(/"/g, '""')}"`;
const INTEGER_TYPES = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)$/;

/**
 * Late values in every table of a `ballast.duckdb` file: DATE/TIMESTAMP columns, integer columns with
 * time-like names, and ISO dates or time-keyed integers inside VARCHAR columns (JSON text included).
 * Returns the tables scanned and one `table.column: N rows, e.g. <max late value>` line per finding.
 */
export async function auditDuckDb(
  file: string,
  asOf: number,
): Promise<{ tables: string[]; columnsChecked: number; late: string[] }> {
  const c = new AsOfChecker(asOf);
  const db = await Db.open(file, { access_mode: "READ_ONLY" });
  const late: string[] = [];
  let columnsChecked = 0;
  try {
    const cols = await db.all<{ table_name: string; column_name: string; data_type: string }>(
      "select table_name, column_name, data_type from information_schema.columns order by table_name, ordinal_position",
    );
    const tables = [...new Set(cols.map((r) => r.table_name))];
    for (const { table_name: t, column_name: col, data_type: type } of cols) {
      if (col in FORWARD_LOOKING_KEYS) continue;
      const from = `from ${quoteId(t)}`;
      let row: { n: number; example: string | null } | undefined;
      if (type === "DATE") {
        columnsChecked++;
        [row] = await db.all(
          `select count(*)::integer as n, max(${quoteId(col)})::varchar as example ${from} where ${quoteId(col)} > $day::date`,
          { day: c.asOfDay },
        );
      } else if (type.startsWith("TIMESTAMP")) {
        columnsChecked++;
        [row] = await db.all(
          `select count(*)::integer as n, max(${quoteId(col)})::varchar as example ${from} where epoch(${quoteId(col)}) > $asOf`,
          { asOf: c.asOf },
        );
      } else if (INTEGER_TYPES.test(type) && isTimeKey(col)) {
        columnsChecked++;
        const v = `${quoteId(col)}::double`;
        [row] = await db.all(
          `select count(*)::integer as n, max(${quoteId(col)})::varchar as example ${from}
           where (${v} >= 1e9 and ${v} < 1e11 and ${v} > $asOf) or (${v} >= 1e12 and ${v} < 1e14 and ${v} > $asOf * 1000)`,
          { asOf: c.asOf },
        );
      } else if (type === "VARCHAR") {
        columnsChecked++;
        // Prefilter in SQL (any date-like text from the as-of day on, or any 9-14 digit number), check exactly in TS.
        const candidates = await db.all<{ v: string }>(
          `select distinct ${quoteId(col)} as v ${from}
           where ${quoteId(col)} is not null
             and (list_max(regexp_extract_all(${quoteId(col)}, '\\d{4}-\\d{2}-\\d{2}')) >= $day or regexp_matches(${quoteId(col)}, '\\d{9,14}'))`,
          { day: c.asOfDay },
        );
        const hits: string[] = [];
        for (const { v } of candidates) {
          const json = /^\s*[[{]/.test(v) ? tryJson(v) : undefined;
          if (json !== undefined) hits.push(...c.lateInJson(json, `${t}.${col}`));
          else {
            hits.push(...c.lateIsoIn(v));
            if (isTimeKey(col) && /^\d+$/.test(v) && c.lateNumber(Number(v))) hits.push(v);
          }
        }
        const unique = [...new Set(hits)];
        if (unique.length)
          late.push(`${t}.${col}: ${unique.length} late values, e.g. ${unique.slice(0, 3).join(", ")}`);
        continue;
      }
      if (row && row.n > 0) late.push(`${t}.${col}: ${row.n} rows after as-of, max ${row.example}`);
    }
    return { tables, columnsChecked, late };
  } finally {
    db.close();
  }
}

/**
 * Runs the whole audit of one build (published files and `ballast.duckdb`) and returns the findings
 * with how much was scanned, so a test can assert the scan saw something (non-empty) and found nothing late.
 */
export async function auditBuild(
  build: AuditBuild,
): Promise<{ files: number; tables: number; columnsChecked: number; late: string[] }> {
  const asOf = build.manifest.asOf;
  const files = auditPublishedFiles(build.buildDir, asOf);
  const db = await auditDuckDb(join(build.buildDir, "ballast.duckdb"), asOf);
  return {
    files: files.files,
    tables: db.tables.length,
    columnsChecked: db.columnsChecked,
    late: [...files.late, ...db.late],
  };
}
