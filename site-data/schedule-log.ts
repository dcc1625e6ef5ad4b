import { z } from "zod";

/**
 * The scheduler's run log (written by `tsx build/cli.ts schedule`, build/schedule.ts; read by
 * `/api/health`). It lives in the same storage as the builds (fs data dir or S3 bucket), so the API
 * reads it through its object reader wherever it runs, and the scheduler needs no access to the
 * API's state store (the embedded PGlite store is owned by the API process):
 * - `scheduler/status.json` (SCHEDULE_STATUS_KEY): one object, rewritten after every run: per job
 *   its cadence, last run, last successful run and consecutive error runs, plus the newest runs;
 * - `scheduler/runs/<runId>.json` (SCHEDULE_RUNS_PREFIX): one object per run, pruned by count and age.
 * Times are Unix seconds on the wall clock.
 */
export const SCHEDULE_STATUS_KEY = "scheduler/status.json";
export const SCHEDULE_RUNS_PREFIX = "scheduler/runs/";

/** The scheduled jobs and their cadences (cron in UTC; `intervalSec` the nominal period, health's `producerIntervalSec`). */
export const SCHEDULE_JOBS = {
  /** Prices and peg: DefiLlama list (supply + prices) and price history, Binance bars; then a live build. */
  "prices-peg": { cron: "*/15 * * * *", intervalSec: 900 },
  /** Freeze/blacklist and mint/burn logs: on-chain ingestion (needs `BALLAST_RPC_<CHAIN>`); then a live build. */
  freezes: { cron: "*/20 * * * *", intervalSec: 1200 },
  /** Markets: CoinGecko markets, supply charts, per-coin detail, FX, yields, DEX pools, ratings, reserves, USDS status; then a live build. */
  markets: { cron: "0 * * * *", intervalSec: 3600 },
  /** After 00:00 UTC: a live build (daily digest) and the immutable dated snapshot of the day that just ended. */
  daily: { cron: "5 0 * * *", intervalSec: 86400 },
} as const;
export type ScheduleJobName = keyof typeof SCHEDULE_JOBS;

/**
 * Outcome of one run: `ok` (captured and published), `partial` (published, but some upstream calls
 * failed: `captureErrors`), `error` (nothing published: `error` says why; a "cron error run"),
 * `skipped` (a tick fired while the job's previous run was still queued or running: overlap
 * prevention), `aborted` (stopped by a shutdown before publishing).
 */
export const ScheduleRunStatusSchema = z.enum(["ok", "partial", "error", "skipped", "aborted"]);

/** Circuit breaker state of an upstream source (same shape as the manifest's `circuits`). */
const CircuitSchema = z.object({
  state: z.enum(["closed", "open", "half-open"]),
  consecutiveFailures: z.number().int(),
  lastSuccessAt: z.number().int().nullable(),
});

/** One run of a scheduled job. */
export const ScheduleRunSchema = z.object({
  runId: z.string(),
  job: z.string(),
  status: ScheduleRunStatusSchema,
  /** Tick time (Unix s): when cron fired (queued behind another job's run until `startedAt`). */
  scheduledAt: z.number().int(),
  startedAt: z.number().int(),
  finishedAt: z.number().int(),
  /** Wall times in ms for ordering runs within a second (overlap checks). */
  startedAtMs: z.number().int(),
  finishedAtMs: z.number().int(),
  /** As-of (Unix s, the wall clock when capture ended) of the build; null when none ran. */
  asOf: z.number().int().nullable(),
  buildId: z.string().nullable(),
  /** Raw capture objects written. */
  captured: z.number().int(),
  /** Upstream calls that failed (the build used the newest earlier capture). */
  captureErrors: z.array(
    z.object({ endpoint: z.string(), params: z.record(z.string(), z.string()), message: z.string() }),
  ),
  /** Circuit states of the upstream clients after the capture (persist across runs of the process). */
  circuits: z.record(z.string(), CircuitSchema),
  /** Why the run failed, was skipped or aborted; null when ok/partial. */
  error: z.string().nullable(),
  /** Extra notes (e.g. on-chain ingestion skipped for lack of an RPC provider, dated snapshot written). */
  notes: z.array(z.string()),
});
export type ScheduleRun = z.infer<typeof ScheduleRunSchema>;

/** Per-job summary in `scheduler/status.json`. */
export const ScheduleJobStatusSchema = z.object({
  cron: z.string(),
  intervalSec: z.number().int().positive(),
  lastRun: ScheduleRunSchema.nullable(),
  /** finishedAt of the newest `ok`/`partial` run; null when none. */
  lastSuccessAt: z.number().int().nullable(),
  /** Newest `error` run; null when none was kept. */
  lastErrorRun: ScheduleRunSchema.nullable(),
  /** `error` runs since the last `ok`/`partial` one. */
  consecutiveErrors: z.number().int().min(0),
});
export type ScheduleJobStatus = z.infer<typeof ScheduleJobStatusSchema>;

/** `scheduler/status.json`. */
export const ScheduleStatusSchema = z.object({
  /** Unix s of the last write. */
  updatedAt: z.number().int(),
  startedAt: z.number().int(),
  /** Unix s of a graceful shutdown; null while running (or after a crash). */
  stoppedAt: z.number().int().nullable(),
  jobs: z.record(z.string(), ScheduleJobStatusSchema),
  /** Newest runs (all jobs, skipped ticks included), oldest first. */
  recent: z.array(ScheduleRunSchema),
});
export type ScheduleStatus = z.infer<typeof ScheduleStatusSchema>;

/**
 * The job whose capture refreshes the inputs of a health cache key (spec 2.8 keys, then site-data
 * artifact keys by family). Every live build republishes every artifact; this names the job whose
 * upstream calls make the cache's data newer, and so its cadence.
 */
export function producerJobOf(cacheKey: string): ScheduleJobName {
  if (/blacklist|mint-burn|freeze/.test(cacheKey)) return "freezes";
  if (/digest|snapshot/.test(cacheKey)) return "daily";
  if (
    /^(stablecoin-charts|usds-status|fx-rates|bluechip-ratings|dex-liquidity|yield|chains|non-usd-share|supply|reserve|redemption)/.test(
      cacheKey,
    )
  )
    return "markets";
  return "prices-peg";
}
