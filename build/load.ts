import { ENDPOINTS, rawTables } from "../pipelines/sources/endpoints.ts";
import type { Capture } from "../pipelines/sources/types.ts";
import type { Db } from "./duckdb.ts";
import { must } from "../api/lib/must.ts";

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

/**
 * Load stage: validates every capture's payload and rows (zod) and appends them to the raw tables,
 * each row tagged with `_observed_at` (Unix s) of its capture. History rows dated (UTC day) after
 * asOf are skipped. Payload schemas check only the envelope, so a payload failing one (wrong
 * top-level shape) is rejected whole (`payload-rejected`, with the zod path and message in the
 * capture's `rejected`); bad rows inside are dropped by the endpoint's parser and counted per
 * reason (→ manifest `sources[].dropped`). A parser that throws rejects only its capture
 * (`parse-failed`).
 */
export async function loadCaptures(db: Db, captures: Capture[], asOf: number): Promise<SourceLoadReport[]> {
  const asOfDay = new Date(asOf * 1000).toISOString().slice(0, 10);
  const buffers = new Map<string, Record<string, unknown>[]>();
  for (const t of rawTables()) buffers.set(t.name, []);
  const reports = new Map<string, SourceLoadReport>();
  for (const key of Object.keys(ENDPOINTS).sort()) {
    reports.set(key, { endpoint: key, captures: [], rows: 0, dropped: {}, newestObservedAt: null, status: "missing" });
  }
  for (const c of captures) {
    const ep = ENDPOINTS[c.endpoint];
    const report = must(reports.get(c.endpoint), `load report of endpoint ${c.endpoint}`);
    const entry = {
      path: c.path,
      origin: c.origin,
      observedAt: c.observedAt,
      sha256: c.sha256,
      params: c.params,
      rows: 0,
    } as SourceLoadReport["captures"][number];
    report.captures.push(entry);
    const payload = ep.payloadSchema.safeParse(c.payload);
    if (!payload.success) {
      const issue = payload.error.issues[0];
      entry.rejected = `payload failed schema at ${issue?.path.join(".") || "root"}: ${issue?.message ?? "invalid"}`;
      report.dropped["payload-rejected"] = (report.dropped["payload-rejected"] ?? 0) + 1;
      continue;
    }
    let parsed: ReturnType<typeof ep.toRows>;
    try {
      parsed = ep.toRows(payload.data, c);
    } catch (e) {
      entry.rejected = `parser failed: ${(e as Error).message}`;
      report.dropped["parse-failed"] = (report.dropped["parse-failed"] ?? 0) + 1;
      continue;
    }
    for (const [reason, n] of Object.entries(parsed.dropped))
      report.dropped[reason] = (report.dropped[reason] ?? 0) + n;
    const buf = must(buffers.get(ep.table.name), `row buffer of raw table ${ep.table.name}`);
    for (const row of parsed.rows) {
      if (ep.dateColumn && String(row[ep.dateColumn]) > asOfDay) continue;
      buf.push({ ...row, _observed_at: c.observedAt });
      entry.rows++;
    }
    report.rows += entry.rows;
    report.newestObservedAt = Math.max(report.newestObservedAt ?? 0, c.observedAt);
    const fresh = asOf - c.observedAt <= ep.maxStalenessSec;
    report.status = report.status === "ok" || fresh ? "ok" : "stale";
  }
  for (const t of rawTables()) {
    await db.loadRows(
      t.name,
      { ...t.columns, _observed_at: "BIGINT" },
      must(buffers.get(t.name), `row buffer of raw table ${t.name}`),
    );
  }
  return [...reports.values()];
}
