import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Db } from "../../build/duckdb.ts";
import { runBuild } from "../../build/run-build.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";
import { E2E_SERVICE_TOKEN, type OpsLane, startOpsLane } from "../helpers/ops.ts";

// Issue 31 item 1: backfill-dews and audit-depeg-history are real jobs over the recorded history. A real
// build as of 2023-03-15 serves; the jobs run the backtest as of it (build/depeg-backtest-cli.ts). The
// figures are checked against values this test computes itself, in SQL over the build's published
// DuckDB file and from its published depeg events; a verdict recorded by POST is applied by the next
// build (the deleted event is gone, the manifest lists it) and the dated snapshot is not rewritten.
const AS_OF = Date.parse("2023-03-15T00:00:00Z") / 1000;
const DAY = 86_400;
const H = 7 * DAY;

let lane: OpsLane;
let dataDir: string;
let first: BuildManifest;

interface PublishedEvent {
  id: number;
  stablecoinId: string;
  symbol: string;
  direction: string;
  startedAt: number;
  endedAt: number | null;
}
const eventsOf = (buildId: string): PublishedEvent[] =>
  JSON.parse(readFileSync(join(dataDir, "builds", buildId, "site-data/depeg-events.json"), "utf8")).events;

beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  dataDir = mkdtempSync(join(tmpdir(), "ballast-depeg-backtest-"));
  ({ manifest: first } = await runBuild({
    asOf: AS_OF,
    captureDir: CAPTURE_DIR,
    sink: new FsSink(dataDir),
    warehousePath: null,
  }));
  lane = await startOpsLane({ schemaPrefix: "ballast_depeg_backtest", dataDir });
}, 900_000);
afterAll(async () => {
  if (lane) await lane.close();
  else if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const call = (method: string, path: string, headers: Record<string, string> = {}) => lane.call(method, path, headers);
const jobCount = () => lane.jobCount();
/** Starts `path` with `method` (202 with jobWaitMs 0), waits for its job to end and returns the 202 body and the job. */
const runToEnd = <T>(method: string, path: string, headers: Record<string, string> = {}) =>
  lane.runToEnd<T>(path, headers, method);

interface Counts {
  events: number;
  covered: number;
  warned: number;
  trueAlerts: number;
  falseAlarms: number;
  precision: number | null;
  recall: number | null;
}
interface DewsReport {
  methodology: { version: string; dewsVersion: string; horizonHours: number; alertScore: number };
  asOf: number;
  overall: Counts;
  coins: (Counts & { stablecoinId: string })[];
  events: { id: number; stablecoinId: string; outcome: string; leadHours: number | null }[];
}
interface AuditResult {
  dryRun: boolean;
  eventsAudited: number;
  findingsTotal: number;
  counts: Record<string, number>;
  findings: { kind: string; eventId: number; detail: { eventIds?: number[] } }[];
  repairs: { into: number; eventIds: number[] }[];
  recorded: { key: string; version: number; sha256: string } | null;
}

describe("backfill-dews (issue 31 item 1)", () => {
  it("validates DEWS against the depeg history; figures match SQL over the build's published DuckDB file", async () => {
    const { job } = await runToEnd<DewsReport>("GET", "/api/backfill-dews");
    expect(job.error).toBeNull();
    expect(job.status).toBe("succeeded");
    const report = job.result;
    expect(report.asOf).toBe(AS_OF);
    expect(report.methodology).toMatchObject({
      version: "ballast-dews-validation-v1",
      dewsVersion: "ballast-dews-v1",
      horizonHours: 168,
      alertScore: 36,
    });
    // independent: per event, was a DEWS ≥ 36 issued (end of its day) in [start − 7 d, start]?
    const db = await Db.open(join(dataDir, "builds", first.buildId, "ballast.duckdb"), { access_mode: "READ_ONLY" });
    try {
      const perEvent = await db.all<{ id: string; covered: boolean; warned: boolean }>(
        `select e.id::varchar as id,
           count(d.score) > 0 as covered,
           coalesce(bool_or(d.score >= 36), false) as warned
         from depeg_events e left join dews_daily d on d.stablecoin_id = e.stablecoin_id
           and epoch(d.date) + ${DAY} between e.started_at - ${H} and e.started_at
         group by e.id order by e.id`,
      );
      expect(report.overall.events).toBe(perEvent.length);
      expect(report.overall.events).toBeGreaterThan(10);
      expect(report.overall.covered).toBe(perEvent.filter((e) => e.covered).length);
      expect(report.overall.warned).toBe(perEvent.filter((e) => e.warned).length);
      const warnedIds = new Set(perEvent.filter((e) => e.warned).map((e) => e.id));
      for (const e of report.events) expect(e.outcome === "warned", String(e.id)).toBe(warnedIds.has(String(e.id)));
      // alert episodes: islands of consecutive days at ≥ 36; true when an event of the coin starts in [t0, t0 + 7 d],
      // false unless an event of the coin was open at t0 or ended within 7 d before it
      const [ep] = await db.all<{ t: number; f: number }>(
        `with alert as (
           select stablecoin_id, epoch(date)::bigint as day,
             epoch(date)::bigint - ${DAY} * row_number() over (partition by stablecoin_id order by date) as island
           from dews_daily where score >= 36
         ),
         episodes as (select stablecoin_id, min(day) + ${DAY} as t0 from alert group by stablecoin_id, island),
         judged as (
           select
             exists (select 1 from depeg_events e where e.stablecoin_id = x.stablecoin_id and e.started_at between x.t0 and x.t0 + ${H}) as is_true,
             exists (select 1 from depeg_events e where e.stablecoin_id = x.stablecoin_id and e.started_at < x.t0
                       and (e.ended_at is null or e.ended_at >= x.t0 - ${H})) as in_event,
             x.t0 + ${H} > ${AS_OF} as open
           from episodes x
         )
         select count(*) filter (where is_true)::integer as t,
                count(*) filter (where not is_true and not in_event and not open)::integer as f
         from judged`,
      );
      expect([report.overall.trueAlerts, report.overall.falseAlarms]).toEqual([ep.t, ep.f]);
      expect(report.overall.precision).toBeCloseTo(ep.t / (ep.t + ep.f), 4);
      const coverage = perEvent.filter((e) => e.covered).length;
      expect(report.overall.recall).toBeCloseTo(perEvent.filter((e) => e.warned).length / coverage, 4);
    } finally {
      db.close();
    }
    // per coin: the coin rows add up to the overall counts
    const sum = (k: keyof Counts) => report.coins.reduce((s, c) => s + Number(c[k]), 0);
    expect([sum("events"), sum("warned"), sum("falseAlarms")]).toEqual([
      report.overall.events,
      report.overall.warned,
      report.overall.falseAlarms,
    ]);
  }, 900_000);
});

describe("audit-depeg-history (issue 31 item 1)", () => {
  it("GET without dry-run=true is 405; a bad filter is 400 naming it before any job starts", async () => {
    const get = await call("GET", "/api/audit-depeg-history");
    expect([get.status, get.headers.get("Allow")]).toEqual([405, "POST"]);
    const n = await jobCount();
    for (const [method, path, param] of [
      ["GET", "/api/audit-depeg-history?dry-run=true&symbol=ZZZ", "symbol"],
      ["POST", "/api/audit-depeg-history?symbol=ZZZ", "symbol"],
      ["POST", "/api/audit-depeg-history?delete=123456789", "delete"],
      ["POST", "/api/audit-depeg-history?dry-run=false&delete=1,2", "delete"],
      ["GET", "/api/audit-depeg-history?dry-run=true&repair=everything", "repair"],
      ["POST", "/api/audit-depeg-history?min-supply=-1", "min-supply"],
    ] as const) {
      const r = await call(method, path);
      expect([path, r.status]).toEqual([path, 400]);
      expect((await r.json()).error).toContain(`Invalid parameter ${param}`);
    }
    expect(await jobCount()).toBe(n);
  });

  it("preview: the backtest's USDC events and their synthetic splits, as the published events show them", async () => {
    const { job } = await runToEnd<AuditResult>("GET", "/api/audit-depeg-history?dry-run=true&symbol=usdc&limit=1000");
    expect(job.status).toBe("succeeded");
    const usdc = eventsOf(first.buildId)
      .filter((e) => e.stablecoinId === "usdc-circle")
      .sort((a, b) => a.startedAt - b.startedAt);
    expect(job.result.dryRun).toBe(true);
    expect(job.result.eventsAudited).toBe(usdc.length);
    // chains of consecutive same-direction events ≤ 24 h apart (end to next start)
    const chains: string[][] = [];
    for (const dir of ["above", "below"]) {
      let chain: PublishedEvent[] = [];
      const close = () => {
        if (chain.length > 1) chains.push(chain.map((e) => String(e.id)));
        chain = [];
      };
      for (const e of usdc.filter((x) => x.direction === dir)) {
        const prev = chain.at(-1);
        if (prev && !(prev.endedAt !== null && e.startedAt - prev.endedAt <= DAY)) close();
        chain.push(e);
      }
      close();
    }
    const splits = job.result.findings.filter((f) => f.kind === "synthetic-split");
    expect(splits.map((f) => (f.detail.eventIds ?? []).map(String)).sort()).toEqual(chains.sort());
    expect(job.result.counts["not-reproduced"] ?? 0).toBe(0);
    expect(job.result.recorded).toBeNull();
    expect(existsSync(join(dataDir, "verdicts"))).toBe(false);
  }, 900_000);

  it("POST dry-run=false records a versioned verdict file; the next build applies it and lists it in its manifest", async () => {
    const before = eventsOf(first.buildId);
    const usdt = before.filter((e) => e.stablecoinId === "usdt-tether");
    expect(usdt.length).toBeGreaterThan(0);
    const victim = String(usdt[0].id);
    const snapshotFile = join(dataDir, "snapshots/2023-03-14.json");
    const snapshot = { bytes: readFileSync(snapshotFile, "utf8"), mtimeMs: statSync(snapshotFile).mtimeMs };
    const path = `/api/audit-depeg-history?dry-run=false&symbol=USDT&delete=${victim}`;
    const { accepted, job } = await runToEnd<AuditResult>("POST", path, { "Idempotency-Key": "verdict-1" });
    expect(job.error).toBeNull();
    expect(job.result.dryRun).toBe(false);
    expect(job.result.recorded?.key).toBe("verdicts/depeg-history/v0001.json");
    const file = JSON.parse(readFileSync(join(dataDir, "verdicts/depeg-history/v0001.json"), "utf8"));
    expect(file.version).toBe(1);
    expect(file.recordedBy).toBe(E2E_SERVICE_TOKEN.id);
    expect(file.basis).toEqual({ buildId: first.buildId, asOf: AS_OF });
    expect(file.deletes.map((d: { eventId: number }) => String(d.eventId))).toEqual([victim]);
    expect(file.deletes[0].why[0]).toBe("operator-delete");

    // the same Idempotency-Key replays the answer: the same job, no second recording
    const again = await call("POST", path, { "Idempotency-Key": "verdict-1" });
    expect(again.headers.get("X-Idempotent-Replay")).toBe("true");
    expect(((await again.json()) as { requestId: string }).requestId).toBe(accepted.requestId);
    expect(existsSync(join(dataDir, "verdicts/depeg-history/v0002.json"))).toBe(false);

    // the next build applies the verdict: the event is gone, the others stay, the manifest lists it
    const { manifest: next } = await runBuild({
      asOf: AS_OF,
      captureDir: CAPTURE_DIR,
      sink: new FsSink(dataDir),
      warehousePath: null,
    });
    expect(next.buildId).not.toBe(first.buildId);
    const after = eventsOf(next.buildId);
    expect(after.map((e) => String(e.id))).not.toContain(victim);
    expect(after.map((e) => String(e.id)).sort()).toEqual(
      before
        .map((e) => String(e.id))
        .filter((id) => id !== victim)
        .sort(),
    );
    expect(next.depegVerdicts).toEqual([
      {
        key: "verdicts/depeg-history/v0001.json",
        version: 1,
        sha256: job.result.recorded?.sha256,
        recordedAt: file.recordedAt,
        recordedBy: E2E_SERVICE_TOKEN.id,
        requestId: null,
        deleted: [Number(victim)],
        merged: [],
        notApplied: [],
      },
    ]);
    expect(first.depegVerdicts).toBeUndefined();
    // the dated snapshot of the closed day is kept as published
    expect(readFileSync(snapshotFile, "utf8")).toBe(snapshot.bytes);
    expect(statSync(snapshotFile).mtimeMs).toBe(snapshot.mtimeMs);
  }, 900_000);
});
