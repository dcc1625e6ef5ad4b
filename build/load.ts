import { ENDPOINTS, rawTables } from "../pipelines/sources/endpoints.ts";
import type { CaptureInfo, RawTable } from "../pipelines/sources/types.ts";
import type { Db } from "./duckdb.ts";
import { NOT_READ, type StagedCache } from "./staged-cache.ts";

/** What loading one endpoint produced, for the manifest. */
export interface SourceLoadReport {
  endpoint: string;
  captures: {
    path: string;
    origin: string;
    observedAt: number;
    sha256: string;
    params: Record<string, string>;
    rows: number;
    rejected?: string;
  }[];
  rows: number;
  dropped: Record<string, number>;
  /** Unix s of the newest capture used. */
  newestObservedAt: number | null;
  status: "ok" | "stale" | "missing";
}

/** One staged capture: its kept rows are in its own staging table, `_staging_<id>`. */
interface StagedCapture {
  id: number;
  /** Rows staged (dated up to as-of). */
  rows: number;
  /** Rows the endpoint's parser dropped, per reason. */
  dropped: Record<string, number>;
  /** Set when the whole capture is rejected: the drop reason and the manifest's `rejected` text. */
  rejected?: { reason: "payload-rejected" | "parse-failed"; message: string };
}

/** Staging table of the capture staged as `id`: the columns of its endpoint's raw table. */
const stagingOf = (id: number) => `_staging_${id}`;

/** `"a", "b", …`: the quoted column names of a raw table's endpoint columns. */
const columnList = (t: RawTable) =>
  Object.keys(t.columns)
    .map((c) => `"${c}"`)
    .join(", ");

/**
 * Select list of a raw table's columns for the parsed-capture cache's Parquet files: Parquet has no
 * 128-bit integer (DuckDB would write a HUGEINT as a lossy DOUBLE), so those columns are written as
 * decimal text (`write`) and every column is cast back to its declared type when read (`read`).
 */
const cachedColumns = (t: RawTable, mode: "write" | "read") =>
  Object.entries(t.columns)
    .map(([c, type]) =>
      mode === "read" ? `"${c}"::${type}` : /HUGEINT/.test(type) ? `"${c}"::varchar as "${c}"` : `"${c}"`,
    )
    .join(", ");

/**
 * Load stage of the raw tables, one capture at a time so that no payload outlives its turn:
 * `stage` validates a capture's payload and rows (zod) and streams the rows into a staging table
 * of its own as the endpoint's parser keeps them; history rows dated (UTC day) after as-of are
 * skipped. `finish` then fills every raw table from the staged rows of the captures a build uses,
 * in their load order, each row tagged with `_observed_at` (Unix s) of its capture, and reports per
 * endpoint. Payload schemas check only the envelope, so a payload failing one (wrong top-level
 * shape) is rejected whole (`payload-rejected`, with the zod path and message in the capture's
 * `rejected`); bad rows inside are dropped by the endpoint's parser and counted per reason
 * (→ manifest `sources[].dropped`). A parser that throws rejects only its capture (`parse-failed`,
 * its staged rows discarded). Captures staged but not passed to `finish` (older snapshots) count
 * nowhere. With a StagedCache, a capture parsed by an earlier build is read back from its Parquet
 * entry (rows, drop counts, rejection) instead of being validated and parsed again.
 */
export class RawLoader {
  private readonly staged = new Map<CaptureInfo, StagedCapture>();
  /** Captures whose parsed rows came from the cache (StagedCache) rather than their payload. */
  cacheHits = 0;

  /** `cache`: parsed captures kept across builds (build/staged-cache.ts); null parses every capture. */
  constructor(
    private readonly db: Db,
    private readonly asOf: number,
    private readonly cache: StagedCache | null = null,
  ) {}

  /**
   * Validates and parses one capture (`info` and its `payload`) and stages its rows; the loader keeps
   * no reference to the payload or its rows. With a cache, a capture parsed before (same bytes, identity
   * and code) is read back from it instead, and a new one is written to it. Throws an Error naming the
   * capture path when its endpoint is unknown (pipelines/sources/endpoints.ts).
   */
  async stage(info: CaptureInfo, payload: unknown): Promise<void> {
    const ep = ENDPOINTS[info.endpoint];
    if (!ep) throw new Error(`capture ${info.path}: unknown endpoint ${info.endpoint}`);
    const staged: StagedCapture = { id: this.staged.size, rows: 0, dropped: {} };
    this.staged.set(info, staged);
    const table = stagingOf(staged.id);
    const key = this.cache?.keyOf(info) ?? null;
    const hit = key ? (this.cache?.get(key) ?? null) : null;
    if (hit) {
      this.cacheHits++;
      staged.dropped = hit.meta.dropped;
      if (hit.meta.rejected) staged.rejected = hit.meta.rejected;
      if (hit.parquet) {
        await this.db.createTable(table, ep.table.columns);
        await this.db.exec(
          `insert into ${table} select ${cachedColumns(ep.table, "read")} from read_parquet('${hit.parquet.replace(/'/g, "''")}')`,
        );
      }
    } else {
      if (payload === NOT_READ)
        throw new Error(
          `capture ${info.path} (${info.endpoint}): its parsed rows were expected in the cache ${this.cache?.dir ?? ""} and are gone; build again`,
        );
      await this.parse(info, payload, staged);
      if (key)
        await this.cache?.put(
          key,
          { dropped: staged.dropped, ...(staged.rejected ? { rejected: staged.rejected } : {}) },
          (file) =>
            this.db.exec(
              `copy (select ${cachedColumns(ep.table, "write")} from ${table}) to '${file.replace(/'/g, "''")}' (FORMAT PARQUET, COMPRESSION zstd)`,
            ),
        );
    }
    if (staged.rejected) {
      await this.db.exec(`drop table if exists ${table}`);
      return;
    }
    // History rows dated (UTC day) after as-of are not used; a row without a date is not either.
    if (ep.dateColumn)
      await this.db.exec(`delete from ${table} where coalesce("${ep.dateColumn}"::varchar, 'null') > $as_of_day`, {
        as_of_day: new Date(this.asOf * 1000).toISOString().slice(0, 10),
      });
    const [{ n }] = await this.db.all<{ n: number }>(`select count(*)::integer as n from ${table}`);
    staged.rows = n;
  }

  /**
   * Checks `payload` against its endpoint's payload schema and streams the rows its parser keeps into
   * the capture's staging table (every row, as-of is applied by `stage`); sets `staged.dropped`, or
   * `staged.rejected` when the payload or the parser fails (the table then holds what was appended).
   * Throws when DuckDB refuses a row.
   */
  private async parse(info: CaptureInfo, payload: unknown, staged: StagedCapture): Promise<void> {
    const ep = ENDPOINTS[info.endpoint];
    const checked = ep.payloadSchema.safeParse(payload);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      staged.rejected = {
        reason: "payload-rejected",
        message: `payload failed schema at ${issue?.path.join(".") || "root"}: ${issue?.message ?? "invalid"}`,
      };
      return;
    }
    const table = stagingOf(staged.id);
    await this.db.createTable(table, ep.table.columns);
    const appender = await this.db.openAppender(table, ep.table.columns);
    // A row DuckDB refuses fails the build; only the parser's own errors reject the capture.
    let appendFailed = false;
    try {
      staged.dropped = ep.toRows(checked.data, { ...info, payload }, (row) => {
        try {
          appender.append(row);
        } catch (e) {
          appendFailed = true;
          throw e;
        }
      }).dropped;
    } catch (e) {
      if (appendFailed) throw e;
      staged.rejected = { reason: "parse-failed", message: `parser failed: ${(e as Error).message}` };
    } finally {
      appender.close();
    }
  }

  /**
   * Creates every raw table (replacing it) with the staged rows of `captures`, capture after capture
   * in the given order (each capture's rows in parser order), drops the staging tables, and returns
   * the report of every known endpoint (sorted by key): captures used, rows, drop counts, freshness
   * at as-of. Throws when a capture of `captures` was not staged.
   */
  async finish(captures: readonly CaptureInfo[]): Promise<SourceLoadReport[]> {
    const reports = new Map<string, SourceLoadReport>();
    for (const key of Object.keys(ENDPOINTS).sort()) {
      reports.set(key, {
        endpoint: key,
        captures: [],
        rows: 0,
        dropped: {},
        newestObservedAt: null,
        status: "missing",
      });
    }
    const loadOrder = new Map<string, { id: number; observedAt: number }[]>();
    for (const c of captures) {
      const staged = this.staged.get(c);
      const report = reports.get(c.endpoint);
      if (!staged || !report) throw new Error(`capture ${c.path} (${c.endpoint}) was not staged before the load`);
      const entry: SourceLoadReport["captures"][number] = {
        path: c.path,
        origin: c.origin,
        observedAt: c.observedAt,
        sha256: c.sha256,
        params: c.params,
        rows: 0,
      };
      report.captures.push(entry);
      if (staged.rejected) {
        entry.rejected = staged.rejected.message;
        report.dropped[staged.rejected.reason] = (report.dropped[staged.rejected.reason] ?? 0) + 1;
        continue;
      }
      for (const [reason, n] of Object.entries(staged.dropped))
        report.dropped[reason] = (report.dropped[reason] ?? 0) + n;
      entry.rows = staged.rows;
      report.rows += staged.rows;
      report.newestObservedAt = Math.max(report.newestObservedAt ?? 0, c.observedAt);
      const ep = ENDPOINTS[c.endpoint];
      const fresh = this.asOf - c.observedAt <= ep.maxStalenessSec;
      report.status = report.status === "ok" || fresh ? "ok" : "stale";
      const order = loadOrder.get(ep.table.name);
      if (order) order.push({ id: staged.id, observedAt: c.observedAt });
      else loadOrder.set(ep.table.name, [{ id: staged.id, observedAt: c.observedAt }]);
    }
    for (const t of rawTables()) {
      await this.db.createTable(t.name, { ...t.columns, _observed_at: "BIGINT" });
      for (const { id, observedAt } of loadOrder.get(t.name) ?? [])
        await this.db.exec(
          `insert into ${t.name} select ${columnList(t)}, $observed_at::bigint from ${stagingOf(id)}`,
          { observed_at: observedAt },
        );
    }
    for (const s of this.staged.values()) if (!s.rejected) await this.db.exec(`drop table ${stagingOf(s.id)}`);
    this.staged.clear();
    return [...reports.values()];
  }
}
