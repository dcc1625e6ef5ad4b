import type { ScheduleStatus } from "../../site-data/schedule-log.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import type { LimiterStoreHealth } from "../lib/rate-limit.ts";
import type { TelegramSummary } from "../lib/telegram/service.ts";

/** Top-level health status (spec 2.8). */
export type HealthStatus = "healthy" | "degraded" | "stale";

/** Circuit breaker state of one upstream source (spec 2.8 `circuits` values; `lastSuccessAt` Unix s). */
export type CircuitState = BuildManifest["circuits"][string];

/**
 * The state store (API keys, status history) as this process sees it: `state` `ok` until an
 * availability failure, `unavailable` until a call succeeds again; `circuit` the breaker in front of
 * it (`open`: keyed requests fail fast with 503 until a half-open probe succeeds); `backend`
 * `postgres` or `pglite`; `reason` a generic word (`timeout`, `connection refused`, `connection
 * lost`, …), never a driver message (health is public); `lastOkAt` / `lastFailureAt` Unix s (null
 * before the first). The key store's own status object fits this shape.
 */
export interface StateStoreHealth {
  state: "ok" | "unavailable";
  circuit: "closed" | "open" | "half-open";
  backend: "postgres" | "pglite" | null;
  reason: string | null;
  lastOkAt: number | null;
  lastFailureAt: number | null;
}

/** CacheStatus (spec 2.8). Ages and budgets in seconds; the `fx-rates` cache adds the fields after `sentinelValidationReason`. */
export interface CacheStatus {
  ageSeconds: number | null;
  maxAge: number;
  /** Generic caches: age/maxAge ≤ 12; `fx-rates`: `sourceStatus` `fresh` or `degraded` (its own cadence). */
  healthy: boolean;
  producerJob: string;
  producerIntervalSec: number | null;
  endpointMaxAge: number;
  availabilityMaxAge: number;
  endpointBudgetReason: string;
  availabilityBudgetReason: string;
  freshnessSource: "freshness-sentinel" | "table-fallback" | "cron-fallback";
  /** Why the freshness sentinel (the manifest's file entry) was not usable: `not-published` when no build publishes the artifact yet; null when valid. */
  sentinelValidationReason: string | null;
  buildId?: string;
  /** Site-data artifact behind the key (`dews` is `stress-signals`, `yield-data` is `yield-rankings`). */
  artifact?: string;
  mode?: "live" | "cached-fallback";
  sourceUpdatedAt?: number | null;
  sourceAgeSeconds?: number | null;
  sourceStatus?: "fresh" | "degraded" | "stale" | "none";
  warning?: string | null;
  consecutiveFallbackRuns?: number | null;
}

/** Health `blacklist` (spec 2.8): amount gaps of the freeze ledger (recent = the 30 days before now). */
export interface BlacklistHealth {
  totalEvents: number;
  missingAmounts: number;
  recentMissingAmounts: number;
  recentWindowSec: number;
  missingRatio: number;
}

/** Health `mintBurn` (spec 2.8). Times Unix s. `sync` judges the live ingestion lane (fresh ≤ 60 min, degraded ≤ 90, stale beyond). */
export interface MintBurnHealth {
  totalEvents: number;
  latestEventTs: number | null;
  latestHourlyTs: number | null;
  freshnessAgeSec: number | null;
  majorStaleCount: number;
  staleMajorSymbols: string[];
  sync: {
    lastSuccessfulSyncAt: number | null;
    freshnessStatus: "fresh" | "degraded" | "stale";
    warning: string | null;
    criticalLaneHealthy: boolean;
  };
}

/**
 * Facts of the published on-chain artifacts health reports (read by the health route from the serving
 * build): the freeze summary's amount gaps and the mint/burn ledger's events (newest block time per
 * coin) and hourly flows' newest hour. The live lane's last sync comes from the manifest.
 */
export interface OnchainHealthInputs {
  blacklist: BlacklistHealth | null;
  mintBurn: {
    totalEvents: number;
    latestEventTsBySymbol: Record<string, number>;
    latestHourlyTs: number | null;
  } | null;
}

/**
 * Recording of the public status history by this process (see api/lib/status-history.ts), as health
 * reports it: `ok` after a successful write, `unavailable` while writes fail (`lastError`, a generic
 * reason such as `status history: timeout`, never driver text; the
 * observations are kept in memory, `pendingObservations`, and written once the store answers),
 * `off` when recording is disabled. `lastRecordedAt` Unix s (on the clock of `timestamp`) of the
 * newest observation written, null before the first; `intervalSec` the recording cadence.
 */
export interface StatusHistoryHealth {
  state: "ok" | "unavailable" | "off";
  lastError: string | null;
  lastRecordedAt: number | null;
  pendingObservations: number;
  intervalSec: number;
}

/**
 * One reason the raw status is not `healthy`, as the status history records it (spec 2.9):
 * `code` names what raised the status (`no-build`, `db-unhealthy`, `cache:<key>`,
 * `fx-cached-fallback`, `circuit-groups-open`, `mint-burn-lane`,
 * `publication-coverage:list-snapshot`, `publication-coverage:skipped-captures`), `status` what it
 * raised it to, `publicImpact` whether it opens an incident of the public history
 * (`causePublicImpact`), `detail` a short human explanation.
 */
export interface StatusCause {
  code: string;
  status: "degraded" | "stale";
  publicImpact: boolean;
  detail: string;
}

/** Health resource (spec 2.8) plus `clock` (replay or wall clock in force) and, when known, `stateStore` and `statusHistory`. */
export interface Health {
  status: HealthStatus;
  /** Unix s of the clock in force. */
  timestamp: number;
  /** Self-explanatory findings; those that set `status` come first and say so. */
  warnings: string[];
  caches: Record<string, CacheStatus>;
  blacklist: BlacklistHealth | null;
  mintBurn: MintBurnHealth | null;
  circuits: Record<string, CircuitState>;
  /** The messaging bot's summary (spec 2.8); null when no bot is configured or its store did not answer (a warning says which). */
  telegramSummary: TelegramSummary | null;
  clock: { mode: "replay" | "wall"; buildId: string | null; asOf: number | null };
  stateStore?: StateStoreHealth;
  /** The rate limiter's store (Redis or in-process) as this process sees it; `since` on the clock of `timestamp`. */
  limiterStore?: LimiterStoreHealth;
  statusHistory?: StatusHistoryHealth;
}

/** Inputs of `assessHealth` besides the build and the clock. */
export interface HealthOptions {
  /** The state store as this process sees it (echoed as `stateStore`; `unavailable` is cause `db-unhealthy`). */
  stateStore?: StateStoreHealth;
  /** The rate limiter's store (echoed as `limiterStore`, `since` shifted like the state store's times; `unavailable` is cause `limiter-unhealthy`). */
  limiterStore?: LimiterStoreHealth;
  onchain?: OnchainHealthInputs;
  /** This process's status history recorder (echoed as `statusHistory`; a failure is a warning, never a status change). */
  statusHistory?: StatusHistoryHealth;
  /** Stored objects outside builds (dated snapshots, digests, their indexes) whose last read failed their schema: a warning naming them. */
  corruptStored?: string[];
  /**
   * Published storage failing to answer the last re-check of `latest.json` (PublishedStore.storageFailure:
   * since when, wall-clock Unix ms, and a generic reason): a warning, no effect on status.
   */
  storageFailure?: { sinceMs: number; error: string } | null;
  /** The published pointer could not be followed at the last re-check (PublishedStore.pointerFailure): a warning, no effect on status. */
  pointerFailure?: { sinceMs: number; error: string } | null;
  /**
   * The messaging bot: its summary, `unavailable` when its state store did not answer, or absent when
   * no bot is configured (`telegramSummary` null and a warning naming what answers 503). No effect on status.
   */
  telegram?: TelegramSummary | "unavailable";
  /**
   * Wall clock (Unix s) at the same instant as `now`. The state store and the recorder time their
   * operations on the wall clock; their times are reported shifted by `now − wallNow`, so every time
   * and age in the body is on the clock of `timestamp` (the replay clock of a recorded build, or the
   * wall clock). Default `now` (no shift).
   */
  wallNow?: number;
  /**
   * The scheduler's run log (`scheduler/status.json`, site-data/schedule-log.ts), when a scheduler
   * writes to this storage: caches name their producer job and its cadence, a cache of unknown age
   * takes its age from the producer's last successful run (`cron-fallback`), and cron error runs and
   * overdue jobs are reported. Its times are on the wall clock (shifted like the state store's).
   */
  schedule?: ScheduleStatus | null;
  /**
   * The route table's features no build publishes yet, given the serving build's file paths (feature
   * → the GET paths answering 503 for it; `notYetAvailableFeatures` of api/routes/not-yet-available.ts,
   * passed by the health route so health does not import the route table). Reported as warnings
   * without effect on status; absent: none reported.
   */
  notYetAvailable?: NotYetAvailable;
}

/** Features no build publishes yet, from the route table and the serving build's file paths: feature → its 503 paths (OpenAPI form). */
export type NotYetAvailable = (published: ReadonlySet<string>) => Record<string, string[]>;

/** Health resource and the causes of its status (what the status history records). */
export interface HealthAssessment {
  health: Health;
  /** One per status-raising finding, in the order found; empty when `healthy`. */
  causes: StatusCause[];
}

/**
 * What one health check finds: its part of the payload (`section`), the causes it raises (each
 * with the status it raises to; the top-level status is the worst), the warnings that set the
 * status (`statusWarnings`, listed first in `warnings`) and notes without effect on status.
 */
export interface Check<S = undefined> {
  section: S;
  causes: StatusCause[];
  statusWarnings: string[];
  notes: string[];
}
