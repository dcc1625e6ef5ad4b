import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Health } from "../../api/health.ts";
import { loadBuildConfig } from "../../build/config.ts";
import { type JobSpec, liveJobRunner, RunLog, Scheduler } from "../../build/schedule.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { SCHEDULE_RUNS_PREFIX, type ScheduleRun, type ScheduleStatus } from "../../site-data/schedule-log.ts";
import { auditPublishedFiles } from "../helpers/as-of-audit.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";
import { startReplayServers } from "../helpers/replay-servers.ts";
import { serveDir } from "../helpers/served-build.ts";

// Live mode end to end, never touching the internet: the scheduler ticks a prices-peg job every 2 s
// (croner), each run captures through the real upstream clients from local servers replaying the
// recorded payloads, builds as of the wall clock and publishes. After the first run CoinGecko
// starts failing (its circuit opens, runs become `partial`); after three published builds every
// upstream fails (an `error` run, nothing published). Then SIGTERM-style shutdown, and the API's
// health reads the run log from the same data dir.
const PLAN: { endpoint: string; params: Record<string, string> }[] = [
  { endpoint: "defillama.stablecoins", params: {} },
  { endpoint: "defillama.stablecoinprices", params: {} },
  { endpoint: "defillama.stablecoincharts", params: { chain: "all" } },
  { endpoint: "coingecko.markets", params: {} },
  { endpoint: "frankfurter.rates", params: { base: "EUR", start: "2025-03-01" } },
  { endpoint: "binance.klines", params: { symbol: "USDCUSDT", interval: "1m" } },
  { endpoint: "defillama-yields.pools", params: {} },
];
const JOB: JobSpec = {
  name: "prices-peg",
  cron: "*/2 * * * * *",
  intervalSec: 900,
  endpoints: PLAN.map((p) => p.endpoint),
};

let dir: string;
let runs: ScheduleRun[];
let status: ScheduleStatus;
let runObjects: string[];
let health: Health;
let requests: string[];
const t0 = Date.now();

beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  dir = mkdtempSync(join(tmpdir(), "ballast-schedule-e2e-"));
  const replay = await startReplayServers(CAPTURE_DIR, { newestPoints: 30 });
  requests = replay.requests;
  const sink = new FsSink(dir);
  const config = loadBuildConfig({
    BALLAST_CAPTURE_DIR: CAPTURE_DIR,
    BALLAST_DATA_DIR: dir,
    BALLAST_UPSTREAM_URLS: Object.entries(replay.urls)
      .map(([s, u]) => `${s}=${u}`)
      .join(","),
  });
  const runLog = new RunLog(sink, { keepRuns: 6, keepDays: 14, recentKept: 200 });
  await runLog.open([JOB]);
  const live = liveJobRunner({
    config,
    sink,
    env: {},
    plan: () => PLAN,
    clientOptions: { retries: 0, timeoutMs: 5000, failureThreshold: 1, cooldownMs: 600_000 },
  });
  // Upstream failures start with a cycle, not when the test notices the previous one ended: cycle 2 on
  // finds CoinGecko failing (partial runs), cycle 4 every upstream (an error run).
  let cycle = 0;
  const runner: typeof live = (job, ctx) => {
    cycle++;
    if (cycle === 2) replay.failing.coingecko = 503;
    if (cycle === 4) for (const s of Object.keys(replay.urls)) replay.failing[s] = 503;
    return live(job, ctx);
  };
  const scheduler = new Scheduler([JOB], runner, runLog);
  const done = (s: ScheduleStatus) => s.recent.filter((r) => r.status !== "skipped");
  try {
    scheduler.start();
    // Waits on the run log, with no budget of its own: a busy machine builds slower, and only the
    // hook's liveness timeout below ends a run that never comes.
    const until = async (pred: () => boolean) => {
      while (!pred()) await new Promise((r) => setTimeout(r, 200));
    };
    await until(() => done(runLog.snapshot()).length >= 4);
  } finally {
    await scheduler.stop(60_000);
    await replay.close();
  }
  status = JSON.parse(readFileSync(join(dir, "scheduler/status.json"), "utf8"));
  runs = done(status);
  runObjects = await sink.list(SCHEDULE_RUNS_PREFIX);
  if (process.env.SCHED_TIMING)
    console.error(
      "TIMING",
      Date.now() - t0,
      JSON.stringify(runs.map((r) => [r.status, r.finishedAtMs - r.startedAtMs, r.startedAtMs - t0])),
    );
  const served = await serveDir(dir, "ballast_schedule_e2e");
  try {
    health = (await served.get<Health>("/api/health")).body;
    if (process.env.SCHED_TIMING) console.error("TIMING health", Date.now() - t0);
  } finally {
    await served.close();
  }
  if (process.env.SCHED_TIMING) console.error("TIMING closed", Date.now() - t0);
}, 840_000); // liveness only: four live builds, stopping and serving; a busy machine takes longer, never fails sooner
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (process.env.SCHED_TIMING) console.error("TIMING removed", Date.now() - t0);
});

const manifestOf = (buildId: string): BuildManifest =>
  JSON.parse(readFileSync(join(dir, "builds", buildId, "manifest.json"), "utf8"));

describe("schedule in live mode against the replay servers", () => {
  it("runs three cycles that publish three builds, then an error run that publishes nothing", () => {
    expect(runs.map((r) => r.status)).toEqual(["ok", "partial", "partial", "error"]);
    const ids = runs.slice(0, 3).map((r) => r.buildId);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids)
      expect(existsSync(join(dir, "builds", must(id, "the build id of a publishing run"), "manifest.json"))).toBe(true);
    expect(runs[3].buildId).toBeNull();
    expect(JSON.parse(readFileSync(join(dir, "latest.json"), "utf8")).buildId).toBe(ids[2]);
    // Every replayed source was asked at the live clients' paths.
    for (const p of [
      "defillama /stablecoins?includePrices=true",
      "coingecko /api/v3/coins/markets?",
      "frankfurter /v1/2025-03-01..?base=EUR",
      "binance /api/v3/klines?symbol=USDCUSDT&interval=1m",
      "defillama-yields /pools",
    ]) {
      expect(requests.some((r) => r.startsWith(p))).toBe(true);
    }
  });

  it("never overlaps: each run starts after the previous one finished, and ticks during a run are skipped and logged", () => {
    const sorted = [...runs].sort((a, b) => a.startedAtMs - b.startedAtMs);
    for (let i = 1; i < sorted.length; i++)
      expect(sorted[i].startedAtMs).toBeGreaterThanOrEqual(sorted[i - 1].finishedAtMs);
    const skipped = status.recent.filter((r) => r.status === "skipped");
    expect(skipped.length).toBeGreaterThan(0);
    // A skipped tick fell inside a run of the same job.
    expect(skipped.some((s) => runs.some((r) => s.startedAtMs > r.startedAtMs && s.startedAtMs < r.finishedAtMs))).toBe(
      true,
    );
  });

  it("builds as of now on the wall clock, from captures made in the same run", () => {
    for (const r of runs.slice(0, 3)) {
      expect(r.asOf).toBeGreaterThanOrEqual(Math.floor(t0 / 1000));
      expect(r.asOf).toBeGreaterThanOrEqual(r.startedAt);
      expect(r.asOf).toBeLessThanOrEqual(r.finishedAt);
      const m = manifestOf(must(r.buildId, `the build id of run ${r.runId}`));
      expect(m.asOf).toBe(r.asOf);
      expect(m.clock).toBe("wall");
      const list = must(
        m.sources.find((s) => s.endpoint === "defillama.stablecoins"),
        "the defillama.stablecoins source in the manifest",
      );
      expect(list.newestObservedAt).toBeGreaterThanOrEqual(r.startedAt);
      expect(list.newestObservedAt).toBeLessThanOrEqual(must(r.asOf, `the as-of of run ${r.runId}`));
    }
  });

  it("publishes nothing dated after its as-of, though the as-of falls between 15-minute slots (depeg starts, the tape)", () => {
    for (const r of runs.slice(0, 3)) {
      const audit = auditPublishedFiles(
        join(dir, "builds", must(r.buildId, `the build id of run ${r.runId}`)),
        must(r.asOf, "as-of"),
      );
      expect(audit.files).toBeGreaterThan(100);
      expect(audit.late).toEqual([]);
    }
  });

  it("records the failing upstream: capture errors and an open circuit in the run log and the manifest", () => {
    expect(runs[0].circuits.coingecko).toMatchObject({ state: "closed", consecutiveFailures: 0 });
    expect(runs[1].captureErrors).toEqual([
      { endpoint: "coingecko.markets", params: {}, message: expect.stringContaining("answered 503") },
    ]);
    expect(runs[1].circuits.coingecko).toMatchObject({ state: "open" });
    expect(runs[2].captureErrors[0].message).toContain("circuit open");
    expect(manifestOf(must(runs[2].buildId, "the third run's build id")).circuits.coingecko).toMatchObject({
      state: "open",
    });
    expect(runs[3].error).toMatch(/^no upstream call succeeded/);
    expect(status.jobs["prices-peg"]).toMatchObject({ consecutiveErrors: 1, lastSuccessAt: runs[2].finishedAt });
  });

  it("prunes old run objects (keepRuns 6) and marks the graceful stop", () => {
    expect(runObjects.length).toBeLessThanOrEqual(6);
    expect(runObjects.some((k) => k.includes(runs[3].runId))).toBe(true);
    expect(status.stoppedAt).not.toBeNull();
  });

  it("health reads the run log: producer job and cadence, the open circuit, the cron error run", () => {
    expect(health.clock.buildId).toBe(runs[2].buildId);
    expect(health.caches.stablecoins).toMatchObject({
      producerJob: "prices-peg",
      producerIntervalSec: 900,
      freshnessSource: "freshness-sentinel",
    });
    // Jobs this scheduler does not run keep the manual `build` producer.
    expect(health.caches["stablecoin-charts"]).toMatchObject({ producerJob: "build", producerIntervalSec: null });
    expect(health.circuits.coingecko).toMatchObject({ state: "open" });
    expect(health.status).not.toBe("healthy");
    expect(
      health.warnings.some(
        (w: string) =>
          w.startsWith("scheduled job prices-peg: cron error run (sets status degraded)") &&
          w.includes("no upstream call succeeded"),
      ),
    ).toBe(true);
  });
});
