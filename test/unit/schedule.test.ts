import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assessHealth, causePublicImpact } from "../../api/health.ts";
import { parseUpstreamUrls } from "../../build/capture.ts";
import { defaultJobs, type JobRunner, type JobSpec, RunLog, Scheduler } from "../../build/schedule.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { cleanManifestRecords, manifestFile } from "../helpers/manifest.ts";
import {
  producerJobOf,
  SCHEDULE_RUNS_PREFIX,
  type ScheduleRun,
  type ScheduleStatus,
} from "../../site-data/schedule-log.ts";

// The scheduler's lane, skips, shutdown and retention with a fake runner (no builds), and how health
// reads a run log. The live path against replay servers is test/e2e/schedule.test.ts.

const JOB_A: JobSpec = { name: "a", cron: "0 0 1 1 *", intervalSec: 900, endpoints: [] };
const JOB_B: JobSpec = { name: "b", cron: "0 0 1 1 *", intervalSec: 3600, endpoints: [] };
const ok = {
  status: "ok" as const,
  asOf: 1,
  buildId: "b1",
  captured: 1,
  captureErrors: [],
  circuits: {},
  error: null,
  notes: [],
};

let dir: string;
beforeEach(() => {
  process.env.BALLAST_LOG = "silent";
  dir = mkdtempSync(join(tmpdir(), "ballast-schedule-unit-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A runner whose runs finish when `release()` is called; `started` lists job names in start order. */
function gatedRunner() {
  const started: string[] = [];
  const gates: (() => void)[] = [];
  const runner: JobRunner = async (job, { signal }) => {
    started.push(job.name);
    await new Promise<void>((r) => gates.push(r));
    return signal.aborted ? { ...ok, status: "aborted", buildId: null, error: "shutdown" } : ok;
  };
  const release = async () => {
    while (!gates.length) await new Promise((r) => setTimeout(r, 5));
    gates.shift()?.();
  };
  return { runner, started, release };
}

describe("Scheduler", () => {
  it("runs jobs one at a time, queues another job's tick, and skips a tick of a job already queued or running", async () => {
    const log = new RunLog(new FsSink(dir), { keepRuns: 100, keepDays: 14 });
    await log.open([JOB_A, JOB_B]);
    const { runner, started, release } = gatedRunner();
    const s = new Scheduler([JOB_A, JOB_B], runner, log);
    const a1 = s.trigger("a");
    const b1 = s.trigger("b"); // queued behind a
    await s.trigger("a"); // a is running: skipped at once
    await s.trigger("b"); // b is queued: skipped at once
    expect(started).toEqual(["a"]);
    await release();
    await a1;
    await release();
    await b1;
    expect(started).toEqual(["a", "b"]);
    const runs = log.snapshot().recent;
    expect(runs.map((r) => [r.job, r.status])).toEqual([
      ["a", "skipped"],
      ["b", "skipped"],
      ["a", "ok"],
      ["b", "ok"],
    ]);
    const [ra, rb] = runs.slice(2);
    expect(rb.startedAtMs).toBeGreaterThanOrEqual(ra.finishedAtMs);
    expect(log.snapshot().jobs.a).toMatchObject({
      lastSuccessAt: ra.finishedAt,
      consecutiveErrors: 0,
      lastRun: { status: "ok" },
    });
  });

  it("records a throwing runner as an error run and counts consecutive errors", async () => {
    const log = new RunLog(new FsSink(dir), { keepRuns: 100, keepDays: 14 });
    await log.open([JOB_A]);
    const s = new Scheduler(
      [JOB_A],
      async () => {
        throw new Error("boom");
      },
      log,
    );
    await s.trigger("a");
    await s.trigger("a");
    expect(log.snapshot().jobs.a).toMatchObject({
      consecutiveErrors: 2,
      lastSuccessAt: null,
      lastErrorRun: { status: "error", error: "boom" },
    });
  });

  it("on shutdown lets the running job finish within the grace period (aborted at its safe point), and records one still running after it as aborted", async () => {
    const log = new RunLog(new FsSink(dir), { keepRuns: 100, keepDays: 14 });
    await log.open([JOB_A]);
    const { runner, started, release } = gatedRunner();
    const s = new Scheduler([JOB_A], runner, log);
    void s.trigger("a");
    while (!started.length) await new Promise((r) => setTimeout(r, 5));
    const stopping = s.stop(5000);
    await release();
    await stopping;
    expect(log.snapshot().recent.map((r) => r.status)).toEqual(["aborted"]);
    expect(log.snapshot().stoppedAt).not.toBeNull();
    await s.trigger("a"); // after stop: no run
    expect(log.snapshot().recent).toHaveLength(1);

    const log2 = new RunLog(new FsSink(join(dir, "2")), { keepRuns: 100, keepDays: 14 });
    await log2.open([JOB_A]);
    const s2 = new Scheduler([JOB_A], () => new Promise(() => {}), log2);
    void s2.trigger("a");
    await new Promise((r) => setTimeout(r, 20));
    await s2.stop(50);
    expect(log2.snapshot().recent.map((r) => [r.status, r.error?.slice(0, 28)])).toEqual([
      ["aborted", "shutdown: still running afte"],
    ]);
  });

  it("gives runs that start in the same millisecond distinct, ascending run ids", async () => {
    const sink = new FsSink(dir);
    const log = new RunLog(sink, { keepRuns: 100, keepDays: 14 });
    await log.open([JOB_A]);
    const frozen = Date.parse("2026-11-26T10:00:00.000Z");
    const s = new Scheduler(
      [JOB_A],
      async () => ok,
      log,
      () => frozen,
    );
    for (let i = 0; i < 3; i++) await s.trigger("a");
    const ids = log.snapshot().recent.map((r) => r.runId);
    expect(ids).toEqual(["20261126T100000000Z-a", "20261126T100000001Z-a", "20261126T100000002Z-a"]);
    expect(await sink.list(SCHEDULE_RUNS_PREFIX)).toHaveLength(3);
  });

  it("keeps the newest keepRuns run objects and carries job summaries over a restart", async () => {
    const sink = new FsSink(dir);
    const log = new RunLog(sink, { keepRuns: 3, keepDays: 14 });
    await log.open([JOB_A]);
    const s = new Scheduler([JOB_A], async () => ok, log);
    for (let i = 0; i < 5; i++) await s.trigger("a");
    const keys = await sink.list(SCHEDULE_RUNS_PREFIX);
    expect(keys).toHaveLength(3);
    expect(keys).toEqual(
      log
        .snapshot()
        .recent.slice(-3)
        .map((r) => `${SCHEDULE_RUNS_PREFIX}${r.runId}.json`),
    );
    const again = new RunLog(sink, { keepRuns: 3, keepDays: 14 });
    await again.open([JOB_A]);
    expect(again.snapshot().jobs.a.lastRun?.runId).toBe(log.snapshot().jobs.a.lastRun?.runId);
    // Age retention: keepDays 0 prunes every object older than now (the run just written stays: same second).
    const aged = new RunLog(sink, { keepRuns: 100, keepDays: 0, nowMs: () => Date.now() + 5000 });
    await aged.open([JOB_A]);
    await new Scheduler(
      [JOB_A],
      async () => ok,
      aged,
      () => Date.now() + 5000,
    ).trigger("a");
    expect(await sink.list(SCHEDULE_RUNS_PREFIX)).toHaveLength(1);
  });

  it("default jobs carry the issue's cadences; an unknown job name is refused", () => {
    expect(defaultJobs().map((j) => [j.name, j.cron, j.intervalSec])).toEqual([
      ["prices-peg", "*/15 * * * *", 900],
      ["freezes", "*/20 * * * *", 1200],
      ["markets", "0 * * * *", 3600],
      ["daily", "5 0 * * *", 86400],
    ]);
    expect(() => defaultJobs(["prices"])).toThrow(/unknown job "prices"/);
    expect(parseUpstreamUrls("defillama=http://127.0.0.1:1, coingecko=http://x/api/v3/")).toEqual({
      defillama: "http://127.0.0.1:1",
      coingecko: "http://x/api/v3/",
    });
    expect(() => parseUpstreamUrls("defillama")).toThrow(/BALLAST_UPSTREAM_URLS/);
  });
});

// ---------------------------------------------------------------------------------------------
// Health reading a run log

const NOW = Date.parse("2026-11-25T12:00:00Z") / 1000;
const file = (artifact: string, maxAgeSec: number, dataAsOf: number | null = NOW - 60) =>
  manifestFile(artifact, maxAgeSec, dataAsOf);
const manifest: BuildManifest = {
  schemaVersion: "1.2.0",
  buildId: "20261125T1200Z-test",
  asOf: NOW - 60,
  generatedAt: NOW - 60,
  clock: "wall",
  contentHash: "0",
  files: [file("stablecoins", 600), file("stablecoin-charts", 3600, null), file("stress-signals", 3600)],
  sources: [
    { endpoint: "frankfurter.rates", status: "ok", rows: 1, dropped: {}, newestObservedAt: NOW - 3600, captures: [] },
  ],
  ...cleanManifestRecords(),
};
const run = (
  job: string,
  status: ScheduleRun["status"],
  at: number,
  extra: Partial<ScheduleRun> = {},
): ScheduleRun => ({
  runId: `${at}-${job}`,
  job,
  status,
  scheduledAt: at,
  startedAt: at,
  finishedAt: at + 30,
  startedAtMs: at * 1000,
  finishedAtMs: (at + 30) * 1000,
  asOf: null,
  buildId: null,
  captured: 0,
  captureErrors: [],
  circuits: {},
  error: null,
  notes: [],
  ...extra,
});
function schedule(over: Partial<ScheduleStatus["jobs"]> = {}): ScheduleStatus {
  return {
    updatedAt: NOW - 100,
    startedAt: NOW - 86400,
    stoppedAt: null,
    recent: [],
    jobs: {
      "prices-peg": {
        cron: "*/15 * * * *",
        intervalSec: 900,
        lastRun: run("prices-peg", "ok", NOW - 400),
        lastSuccessAt: NOW - 370,
        lastErrorRun: null,
        consecutiveErrors: 0,
      },
      markets: {
        cron: "0 * * * *",
        intervalSec: 3600,
        lastRun: run("markets", "ok", NOW - 1000),
        lastSuccessAt: NOW - 970,
        lastErrorRun: null,
        consecutiveErrors: 0,
      },
      ...over,
    },
  };
}

describe("health with a scheduler run log", () => {
  it("names each cache's producer job and cadence; a cache of unknown data time takes the producer's last success (cron-fallback)", () => {
    const h = assessHealth({ manifest }, NOW, "wall", { schedule: schedule() }).health;
    expect(h.caches.stablecoins).toMatchObject({
      producerJob: "prices-peg",
      producerIntervalSec: 900,
      freshnessSource: "freshness-sentinel",
      ageSeconds: 60,
    });
    expect(h.caches.dews).toMatchObject({ producerJob: "prices-peg", producerIntervalSec: 900 });
    expect(h.caches["stablecoin-charts"]).toMatchObject({
      producerJob: "markets",
      producerIntervalSec: 3600,
      freshnessSource: "cron-fallback",
      ageSeconds: 970,
      sentinelValidationReason: "no-data-time",
    });
    expect(h.caches["fx-rates"]).toMatchObject({ producerJob: "markets", producerIntervalSec: 3600 });
    // A job the scheduler does not run: the manual build.
    expect(h.caches["usds-status"]).toMatchObject({ producerJob: "markets" });
    expect(h.status).toBe("healthy");
    // Without a run log: as before.
    expect(assessHealth({ manifest }, NOW, "wall").health.caches.stablecoins).toMatchObject({
      producerJob: "build",
      producerIntervalSec: null,
    });
  });

  it("a cron error run degrades status with a public-impact cause; a partial run is a note; an overdue job degrades", () => {
    const failed = run("prices-peg", "error", NOW - 300, {
      error: "no upstream call succeeded (3 failed): defillama.stablecoins: defillama: /stablecoins answered 503",
    });
    const partial = run("markets", "partial", NOW - 1000, {
      captureErrors: [{ endpoint: "coingecko.markets", params: {}, message: "coingecko: circuit open" }],
    });
    const a = assessHealth({ manifest }, NOW, "wall", {
      schedule: schedule({
        "prices-peg": {
          cron: "*/15 * * * *",
          intervalSec: 900,
          lastRun: failed,
          lastSuccessAt: NOW - 1300,
          lastErrorRun: failed,
          consecutiveErrors: 2,
        },
        markets: {
          cron: "0 * * * *",
          intervalSec: 3600,
          lastRun: partial,
          lastSuccessAt: NOW - 970,
          lastErrorRun: null,
          consecutiveErrors: 0,
        },
      }),
    });
    expect(a.health.status).toBe("degraded");
    expect(a.causes).toContainEqual({
      code: "cron-error:prices-peg",
      status: "degraded",
      publicImpact: true,
      detail: "scheduled job prices-peg: last run failed",
    });
    expect(a.health.warnings.find((w) => w.startsWith("scheduled job prices-peg: cron error run"))).toContain(
      "2 consecutive error run(s)",
    );
    expect(
      a.health.warnings.some(
        (w) =>
          w.startsWith("scheduled job markets: upstream calls failed") &&
          w.includes("coingecko: circuit open") &&
          w.includes("no effect on status"),
      ),
    ).toBe(true);
    expect(causePublicImpact("cron-unhealthy:markets")).toBe(true);

    const overdue = assessHealth({ manifest }, NOW, "wall", {
      schedule: {
        ...schedule(),
        stoppedAt: NOW - 7200,
        jobs: { markets: { ...schedule().jobs.markets, lastRun: run("markets", "ok", NOW - 3 * 3600) } },
      },
    });
    expect(overdue.causes.map((c) => c.code)).toEqual(["cron-unhealthy:markets"]);
    expect(overdue.health.warnings[0]).toMatch(
      /^scheduled job markets overdue \(sets status degraded\): no run since .*the scheduler stopped at/,
    );
  });

  it("maps cache keys to producer jobs by family", () => {
    expect(
      [
        "stablecoins",
        "peg-summary",
        "dews",
        "blacklist-summary",
        "mint-burn-flows",
        "daily-digest",
        "snapshots-index",
        "yield-data",
        "dex-liquidity",
        "chains",
      ].map(producerJobOf),
    ).toEqual([
      "prices-peg",
      "prices-peg",
      "prices-peg",
      "freezes",
      "freezes",
      "daily",
      "daily",
      "markets",
      "markets",
      "markets",
    ]);
  });
});
