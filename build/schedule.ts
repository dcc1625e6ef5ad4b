import { Cron } from "croner";
import { join } from "node:path";
import { liveCapturePlan } from "../pipelines/sources/endpoints.ts";
import { bluechipSlugs } from "../pipelines/sources/bluechip/bluechip.ts";
import type { HttpClient, HttpClientOptions } from "../pipelines/sources/http-client.ts";
import { loadRegistry } from "../pipelines/registry/registry.ts";
import type { Registry } from "../pipelines/registry/schema.ts";
import {
  SCHEDULE_JOBS,
  SCHEDULE_RUNS_PREFIX,
  SCHEDULE_STATUS_KEY,
  type ScheduleJobName,
  type ScheduleRun,
  ScheduleRunSchema,
  type ScheduleStatus,
  ScheduleStatusSchema,
} from "../site-data/schedule-log.ts";
import { runCapture } from "./capture.ts";
import type { BuildConfig } from "./config.ts";
import { log } from "./log.ts";
import { runOnchainCli } from "./onchain-cli.ts";
import { runBuild } from "./run-build.ts";
import type { PublishSink, Sink } from "./sinks/sink.ts";
import { backfillSnapshots } from "./snapshots.ts";

/**
 * One scheduled job: its cron pattern (UTC; croner, seconds field allowed), nominal period, the
 * live endpoints its capture calls (keys of ENDPOINTS), whether it runs on-chain ingestion first
 * (`onchain`), and whether it also writes the dated snapshot of the previous UTC day (`dailySnapshot`).
 */
export interface JobSpec {
  name: string;
  cron: string;
  intervalSec: number;
  endpoints: readonly string[];
  onchain?: boolean;
  dailySnapshot?: boolean;
}

/** Endpoints each default job captures (see SCHEDULE_JOBS for the cadences). */
export const JOB_ENDPOINTS: Record<ScheduleJobName, readonly string[]> = {
  "prices-peg": ["defillama.stablecoins", "defillama.stablecoinprices", "binance.klines"],
  freezes: [],
  markets: [
    "coingecko.markets",
    "defillama.stablecoincharts",
    "defillama.stablecoin",
    "coingecko.market_chart",
    "frankfurter.rates",
    "defillama-yields.pools",
    "curve.pools",
    "bluechip.ratings",
    "reserves.composition",
    "usds.status",
  ],
  daily: [],
};

/** The default jobs (all, or those named in `names`, e.g. from BALLAST_SCHEDULE_JOBS). Throws naming an unknown job. */
export function defaultJobs(names?: string[]): JobSpec[] {
  const all = Object.keys(SCHEDULE_JOBS) as ScheduleJobName[];
  const chosen = names?.length ? names : all;
  return chosen.map((name) => {
    if (!(name in SCHEDULE_JOBS))
      throw new Error(`BALLAST_SCHEDULE_JOBS: unknown job "${name}" (jobs: ${all.join(", ")})`);
    const n = name as ScheduleJobName;
    return {
      name: n,
      ...SCHEDULE_JOBS[n],
      endpoints: JOB_ENDPOINTS[n],
      onchain: n === "freezes",
      dailySnapshot: n === "daily",
    };
  });
}

/** What a job run reports; the scheduler adds the run id, job and times. */
export type RunOutcome = Omit<
  ScheduleRun,
  "runId" | "job" | "scheduledAt" | "startedAt" | "finishedAt" | "startedAtMs" | "finishedAtMs"
>;
/** Runs one job once. `signal` aborts at the next safe point (before the build starts). */
export type JobRunner = (job: JobSpec, ctx: { signal: AbortSignal }) => Promise<RunOutcome>;

const emptyOutcome = (status: ScheduleRun["status"], error: string | null, notes: string[] = []): RunOutcome => ({
  status,
  asOf: null,
  buildId: null,
  captured: 0,
  captureErrors: [],
  circuits: {},
  error,
  notes,
});

// ---------------------------------------------------------------------------------------------
// Run log

/**
 * The run log in storage (site-data/schedule-log.ts): `scheduler/runs/<runId>.json` per run and
 * `scheduler/status.json` (per-job summary + newest runs) rewritten after each run. Writes are
 * serialised. Retention after each write: per-run objects beyond `keepRuns` (newest kept) or older
 * than `keepDays` are deleted; `status.json` keeps the newest `recentKept` runs.
 */
export class RunLog {
  private status: ScheduleStatus;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly sink: Sink,
    private readonly opts: { keepRuns: number; keepDays: number; recentKept?: number; nowMs?: () => number },
  ) {
    const now = this.nowSec();
    this.status = { updatedAt: now, startedAt: now, stoppedAt: null, jobs: {}, recent: [] };
  }

  private nowSec(): number {
    return Math.floor((this.opts.nowMs ?? Date.now)() / 1000);
  }

  /** Loads the previous status (jobs' last runs carry over a restart), registers `jobs`, and writes it. */
  async open(jobs: JobSpec[]): Promise<void> {
    const raw = await this.sink.get(SCHEDULE_STATUS_KEY).catch(() => null);
    const prev = raw ? ScheduleStatusSchema.safeParse(JSON.parse(Buffer.from(raw).toString("utf8"))) : null;
    if (prev?.success) this.status = { ...prev.data, startedAt: this.nowSec(), stoppedAt: null };
    for (const j of jobs) {
      const old = this.status.jobs[j.name];
      this.status.jobs[j.name] = old
        ? { ...old, cron: j.cron, intervalSec: j.intervalSec }
        : {
            cron: j.cron,
            intervalSec: j.intervalSec,
            lastRun: null,
            lastSuccessAt: null,
            lastErrorRun: null,
            consecutiveErrors: 0,
          };
    }
    await this.enqueue(() => this.writeStatus());
  }

  /** Current status (a copy). */
  snapshot(): ScheduleStatus {
    return structuredClone(this.status);
  }

  /** Records one run (validated): its object, the job summary, then retention. */
  record(run: ScheduleRun): Promise<void> {
    const r = ScheduleRunSchema.parse(run);
    return this.enqueue(async () => {
      const job = this.status.jobs[r.job];
      if (job && r.status !== "skipped") {
        job.lastRun = r;
        if (r.status === "ok" || r.status === "partial") {
          job.lastSuccessAt = r.finishedAt;
          job.consecutiveErrors = 0;
        }
        if (r.status === "error") {
          job.lastErrorRun = r;
          job.consecutiveErrors += 1;
        }
      }
      this.status.recent = [...this.status.recent, r].slice(-(this.opts.recentKept ?? 50));
      await this.sink.put(`${SCHEDULE_RUNS_PREFIX}${r.runId}.json`, `${JSON.stringify(r)}\n`);
      await this.writeStatus();
      await this.prune();
    });
  }

  /** Marks a graceful shutdown. */
  close(): Promise<void> {
    return this.enqueue(async () => {
      this.status.stoppedAt = this.nowSec();
      await this.writeStatus();
    });
  }

  private enqueue(fn: () => Promise<void>): Promise<void> {
    const p = this.chain.then(fn);
    this.chain = p.catch((err: Error) => log("warn", "schedule", `run log write failed: ${err.message}`));
    return p;
  }

  private async writeStatus(): Promise<void> {
    this.status.updatedAt = this.nowSec();
    await this.sink.put(SCHEDULE_STATUS_KEY, `${JSON.stringify(ScheduleStatusSchema.parse(this.status))}\n`);
  }

  /** Run ids start with their start stamp (sortable), so key order is time order. */
  private async prune(): Promise<void> {
    const keys = await this.sink.list(SCHEDULE_RUNS_PREFIX);
    const cutoff = runStamp((this.nowSec() - this.opts.keepDays * 86400) * 1000);
    const excess = Math.max(0, keys.length - this.opts.keepRuns);
    const old = keys.filter((k, i) => i < excess || k.slice(SCHEDULE_RUNS_PREFIX.length) < cutoff);
    for (const k of old) await this.sink.delete(k);
  }
}

/** `20261125T235814123Z`: a sortable wall-clock stamp to the millisecond. */
function runStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:.]/g, "");
}

// ---------------------------------------------------------------------------------------------
// Scheduler

/**
 * Runs jobs on their cron patterns (croner, UTC) with overlap prevention:
 * - builds share one warehouse and one storage root, so runs go through one lane: a job firing
 *   while another job runs waits its turn (queued; `scheduledAt` < `startedAt` in its run);
 * - a job firing while its own previous run is still queued or running is skipped and logged as a
 *   `skipped` run (croner `protect`, and the same check for manual triggers).
 * `stop()` stops the timers, aborts the running job at its next safe point (before its build) and
 * waits up to `graceMs` for it; a run still going after that is recorded `aborted`; queued runs that
 * had not started are dropped.
 */
export class Scheduler {
  private readonly crons: Cron[] = [];
  private readonly busy = new Set<string>();
  private lane: Promise<void> = Promise.resolve();
  private readonly controller = new AbortController();
  private running: { job: JobSpec; scheduledAt: number; startedAtMs: number } | null = null;
  private stopping = false;
  private seq = 0;
  /** Start (ms) of the last run: runs start at least 1 ms apart, so run ids (`<stamp>-<job>`) never collide. */
  private lastStartedAtMs = 0;

  constructor(
    private readonly jobs: JobSpec[],
    private readonly runner: JobRunner,
    private readonly runLog: RunLog,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** Starts every job's timer (after `runLog.open`). */
  start(): void {
    for (const job of this.jobs) {
      this.crons.push(
        new Cron(
          job.cron,
          {
            name: `ballast-${job.name}-${process.pid}-${this.seq++}`,
            timezone: "UTC",
            protect: () => {
              void this.recordSkip(job, Math.floor(this.nowMs() / 1000));
            },
            catch: (err) => log("error", "schedule", `${job.name}: tick failed: ${(err as Error).message}`),
          },
          () => this.trigger(job.name),
        ),
      );
    }
    log("info", "schedule", "scheduler started", {
      jobs: this.jobs.map((j, i) => ({
        name: j.name,
        cron: j.cron,
        next: this.crons[i]?.nextRun()?.toISOString() ?? null,
      })),
    });
  }

  /**
   * One tick of `name` now (what cron calls; tests and `schedule --once` call it directly). Resolves
   * when the run is recorded; a tick of a job already queued or running records `skipped` at once.
   */
  trigger(name: string): Promise<void> {
    const job = this.jobs.find((j) => j.name === name);
    if (!job) return Promise.reject(new Error(`unknown job ${name}`));
    const scheduledAt = Math.floor(this.nowMs() / 1000);
    if (this.stopping) return Promise.resolve();
    if (this.busy.has(name)) return this.recordSkip(job, scheduledAt);
    this.busy.add(name);
    const p = this.lane.then(() => this.execute(job, scheduledAt)).finally(() => this.busy.delete(name));
    this.lane = p.catch(() => {});
    return p;
  }

  private recordSkip(job: JobSpec, scheduledAt: number): Promise<void> {
    const ms = this.nowMs();
    log("info", "schedule", `${job.name}: tick skipped, previous run still queued or running`);
    return this.runLog
      .record({
        runId: `${runStamp(ms)}-${job.name}-skipped-${this.seq++}`,
        job: job.name,
        scheduledAt,
        startedAt: Math.floor(ms / 1000),
        finishedAt: Math.floor(ms / 1000),
        startedAtMs: ms,
        finishedAtMs: ms,
        ...emptyOutcome("skipped", "previous run still queued or running"),
      })
      .catch(() => {});
  }

  private async execute(job: JobSpec, scheduledAt: number): Promise<void> {
    if (this.stopping) return;
    const startedAtMs = Math.max(this.nowMs(), this.lastStartedAtMs + 1);
    this.lastStartedAtMs = startedAtMs;
    this.running = { job, scheduledAt, startedAtMs };
    let outcome: RunOutcome;
    try {
      outcome = await this.runner(job, { signal: this.controller.signal });
    } catch (err) {
      outcome = emptyOutcome("error", (err as Error).message);
    }
    if (this.running?.startedAtMs !== startedAtMs) return; // already recorded aborted by stop()
    this.running = null;
    await this.recordRun(job, scheduledAt, startedAtMs, outcome);
  }

  private recordRun(job: JobSpec, scheduledAt: number, startedAtMs: number, outcome: RunOutcome): Promise<void> {
    const finishedAtMs = this.nowMs();
    log(outcome.status === "error" ? "error" : "info", "schedule", `${job.name}: ${outcome.status}`, {
      buildId: outcome.buildId,
      error: outcome.error,
      ms: finishedAtMs - startedAtMs,
    });
    return this.runLog.record({
      runId: `${runStamp(startedAtMs)}-${job.name}`,
      job: job.name,
      scheduledAt,
      startedAt: Math.floor(startedAtMs / 1000),
      finishedAt: Math.floor(finishedAtMs / 1000),
      startedAtMs,
      finishedAtMs,
      ...outcome,
    });
  }

  /** Graceful shutdown (see the class doc). Idempotent. */
  async stop(graceMs: number): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const c of this.crons) c.stop();
    this.controller.abort();
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      this.lane.then(() => true),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (!finished && this.running) {
      const { job, scheduledAt, startedAtMs } = this.running;
      this.running = null;
      await this.recordRun(
        job,
        scheduledAt,
        startedAtMs,
        emptyOutcome(
          "aborted",
          `shutdown: still running after the ${Math.round(graceMs / 1000)} s grace period (nothing it had not published is served; the next build sweeps its leftovers)`,
        ),
      );
    }
    await this.runLog.close();
    log("info", "schedule", "scheduler stopped", { finishedRunningJob: finished });
  }
}

// ---------------------------------------------------------------------------------------------
// Live mode

/** What the live job runner needs. */
export interface LiveDeps {
  config: BuildConfig;
  sink: PublishSink;
  /** Base URL per source (else BALLAST_UPSTREAM_URLS / defaults, see runCapture). */
  baseUrls?: Record<string, string>;
  clientOptions?: Partial<Omit<HttpClientOptions, "name" | "baseUrl">>;
  /** Capture plan of a job; default: the live capture plan restricted to the job's endpoints. */
  plan?: (job: JobSpec, nowMs: number) => { endpoint: string; params: Record<string, string> }[];
  /** Wall clock (ms). */
  nowMs?: () => number;
  env?: NodeJS.ProcessEnv;
  /** Registry the builds use (default pipelines/registry/registry.json); tests pass a subset to keep builds small. */
  registry?: Registry;
}

/** Whether any JSON-RPC provider is configured (`BALLAST_RPC_<CHAIN>`). */
const hasRpc = (env: NodeJS.ProcessEnv) => Object.keys(env).some((k) => k.startsWith("BALLAST_RPC_") && env[k]);

/**
 * The live job runner: capture the job's endpoints through the real upstream clients (one client
 * per source kept across runs, so circuit breakers carry over; states also go to
 * `raw/_circuits.json` and from there into the manifest and health), run on-chain ingestion for
 * `onchain` jobs when an RPC provider is configured, then build as of now on the wall clock
 * (`asOf` = the clock when capture ended, so every capture is at or before it) and publish;
 * `dailySnapshot` jobs then write the dated snapshot of the previous UTC day (skipped when stored).
 * Status: `error` when every upstream call failed or the build threw (nothing published);
 * `partial` when some calls failed; a job that captured nothing and had nothing to capture (e.g.
 * `freezes` without RPC) publishes nothing and is `ok` with a note; `aborted` when stopped before the build.
 */
export function liveJobRunner(deps: LiveDeps): JobRunner {
  const clients = new Map<string, HttpClient>();
  const nowMs = deps.nowMs ?? Date.now;
  const env = deps.env ?? process.env;
  const { config } = deps;
  const plan =
    deps.plan ??
    ((job: JobSpec, now: number) => {
      const registry = loadRegistry();
      return liveCapturePlan({
        detailLlamaIds: registry.coins
          .flatMap((c) => (c.llamaId && c.deadFrom === null ? [c.llamaId] : []))
          .slice(0, 50),
        chartGeckoIds: [],
        fxStart: new Date(now - 400 * 86400_000).toISOString().slice(0, 10),
        bluechipSlugs: bluechipSlugs(config.BALLAST_BLUECHIP_SLUGS),
      }).filter((s) => job.endpoints.includes(s.endpoint));
    });
  return async (job, { signal }) => {
    const notes: string[] = [];
    const captureErrors: RunOutcome["captureErrors"] = [];
    const steps = plan(job, nowMs());
    const written = steps.length
      ? await runCapture(config, deps.sink, {
          plan: steps,
          now: nowMs,
          clients,
          clientOptions: deps.clientOptions,
          baseUrls: deps.baseUrls,
          env,
          onError: (f) => captureErrors.push(f),
        })
      : [];
    const circuits = Object.fromEntries(
      [...clients.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, c]) => [k, c.state]),
    );
    let onchainRan = false;
    if (job.onchain) {
      if (!hasRpc(env)) notes.push("on-chain ingestion skipped: no BALLAST_RPC_<CHAIN> provider configured");
      else {
        const code = await runOnchainCli(["ingest"]);
        onchainRan = true;
        if (code !== 0)
          captureErrors.push({ endpoint: "onchain.events", params: {}, message: `on-chain ingestion exited ${code}` });
      }
    }
    const base = { captured: written.length, captureErrors, circuits, notes };
    const attempted = steps.length + (onchainRan ? 1 : 0);
    if (attempted > 0 && written.length === 0 && captureErrors.length >= attempted) {
      return {
        ...base,
        status: "error",
        asOf: null,
        buildId: null,
        error: `no upstream call succeeded (${captureErrors.length} failed): ${captureErrors
          .slice(0, 3)
          .map((e) => `${e.endpoint}: ${e.message}`)
          .join("; ")}`,
      };
    }
    if (attempted === 0 && !job.dailySnapshot) {
      notes.push("nothing to capture: no build");
      return { ...base, status: "ok", asOf: null, buildId: null, error: null };
    }
    if (signal.aborted)
      return {
        ...base,
        status: "aborted",
        asOf: null,
        buildId: null,
        error: "shutdown before the build started (captures are kept for the next build)",
      };
    const asOf = Math.floor(nowMs() / 1000);
    const built = await runBuild({
      asOf,
      captureDir: config.BALLAST_CAPTURE_DIR,
      sink: deps.sink,
      keepBuilds: config.BALLAST_KEEP_BUILDS,
      registry: deps.registry,
      warehousePath: config.BALLAST_WAREHOUSE ?? join(config.BALLAST_DATA_DIR, "warehouse.duckdb"),
      onchainLedgerPath: config.BALLAST_ONCHAIN_LEDGER ?? join(config.BALLAST_DATA_DIR, "onchain.duckdb"),
      scratchDir: config.BALLAST_SCRATCH_DIR,
    }).catch((err: Error) => err);
    if (built instanceof Error)
      return { ...base, status: "error", asOf, buildId: null, error: `build failed: ${built.message}` };
    if (job.dailySnapshot) {
      const yesterday = new Date((asOf - 86400) * 1000).toISOString().slice(0, 10);
      try {
        const [step] = await backfillSnapshots(yesterday, yesterday, {
          captureDir: config.BALLAST_CAPTURE_DIR,
          sink: deps.sink,
          registry: deps.registry,
        });
        notes.push(`dated snapshot ${yesterday}: ${step?.outcome === "built" ? "written" : "already stored"}`);
      } catch (err) {
        return {
          ...base,
          status: "error",
          asOf,
          buildId: built.manifest.buildId,
          error: `dated snapshot ${yesterday} failed (the live build is published): ${(err as Error).message}`,
        };
      }
    }
    return {
      ...base,
      status: captureErrors.length ? "partial" : "ok",
      asOf,
      buildId: built.manifest.buildId,
      error: null,
    };
  };
}

/**
 * `tsx build/cli.ts schedule`: opens the run log in the configured storage, starts the jobs
 * (BALLAST_SCHEDULE_JOBS, default all) in live mode, and on SIGTERM/SIGINT shuts down gracefully
 * (BALLAST_SCHEDULE_GRACE_SEC). With `once`, runs the named jobs once each, in order, and returns.
 */
export async function runSchedule(
  config: BuildConfig,
  sink: PublishSink,
  opts: { once?: string[] } = {},
): Promise<void> {
  const jobs = defaultJobs(
    config.BALLAST_SCHEDULE_JOBS?.split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );
  const runLog = new RunLog(sink, {
    keepRuns: config.BALLAST_SCHEDULE_KEEP_RUNS,
    keepDays: config.BALLAST_SCHEDULE_KEEP_DAYS,
  });
  await runLog.open(jobs);
  const scheduler = new Scheduler(jobs, liveJobRunner({ config, sink }), runLog);
  if (opts.once) {
    for (const name of opts.once) await scheduler.trigger(name);
    await runLog.close();
    return;
  }
  scheduler.start();
  await new Promise<void>((resolve) => {
    const shutdown = (sig: string) => {
      log("info", "schedule", `${sig}: shutting down`);
      scheduler.stop(config.BALLAST_SCHEDULE_GRACE_SEC * 1000).then(resolve, resolve);
    };
    process.once("SIGTERM", () => shutdown("SIGTERM"));
    process.once("SIGINT", () => shutdown("SIGINT"));
  });
}
