import type { LimiterStoreHealth } from "./lib/rate-limit.ts";
import type { Artifact } from "../site-data/contract.ts";
import { bluechipRatingsArtifact } from "../site-data/bluechip-ratings.ts";
import { dexLiquidityArtifact } from "../site-data/dex-liquidity.ts";
import type { BuildManifest } from "../site-data/manifest.ts";
import { producerJobOf, type ScheduleStatus } from "../site-data/schedule-log.ts";
import { stablecoinChartsArtifact } from "../site-data/stablecoin-charts.ts";
import { stablecoinsArtifact } from "../site-data/stablecoins.ts";
import { stressSignalsArtifact } from "../site-data/stress-signals.ts";
import { usdsStatusArtifact } from "../site-data/usds-status.ts";
import { yieldRankingsArtifact } from "../site-data/yields.ts";
import { assessFreshness, type FreshnessStatus, GENERIC_RATIOS } from "./lib/freshness.ts";
import type { TelegramSummary } from "./lib/telegram/service.ts";
import { notYetAvailableFeatures } from "./routes/not-yet-available.ts";

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

/** Artifacts reported in the `blacklist` / `mintBurn` sections instead of `caches` (spec 2.8: blacklist never escalates status). */
export const ONCHAIN_SECTION_ARTIFACTS = new Set(["blacklist", "blacklist-summary", "mint-burn", "mint-burn-flows"]);
/** A coin with tracked supply contracts whose newest mint/burn is older than this (s) is a stale major. */
const MINT_BURN_STALE_COIN_SEC = 7 * 86400;

/**
 * The `mintBurn` section: newest event and hour, coins whose newest event is older than 7 days
 * (`staleMajorSymbols`), and the live lane's sync freshness from the last ledger sync
 * (fresh ≤ 60 min, degraded ≤ 90 min, stale beyond). Without a live ledger the lane is reported
 * stale with a warning; buildHealth then leaves the top-level status alone (no lane is running).
 */
function mintBurnHealth(
  inputs: OnchainHealthInputs["mintBurn"],
  lastLiveSyncAt: number | null,
  now: number,
): MintBurnHealth | null {
  if (!inputs) return null;
  const latest = Object.values(inputs.latestEventTsBySymbol);
  const latestEventTs = latest.length ? Math.max(...latest) : null;
  const stale = Object.entries(inputs.latestEventTsBySymbol)
    .filter(([, ts]) => now - ts > MINT_BURN_STALE_COIN_SEC)
    .map(([sym]) => sym)
    .sort();
  const at = lastLiveSyncAt;
  const ageSec = at === null ? null : Math.max(0, now - at);
  const freshnessStatus =
    ageSec !== null && ageSec <= 3600 ? "fresh" : ageSec !== null && ageSec <= 5400 ? "degraded" : "stale";
  const warning =
    at === null
      ? "no live mint/burn ingestion in this build: flows come from recorded log archives only (configure BALLAST_RPC_<CHAIN> and run `npx tsx build/onchain-cli.ts ingest` before the build)"
      : freshnessStatus === "fresh"
        ? null
        : `last live sync ${isoMinute(at)}, ${age(Math.max(0, now - at))} before now (fresh up to 60 min, degraded up to 90)`;
  return {
    totalEvents: inputs.totalEvents,
    latestEventTs,
    latestHourlyTs: inputs.latestHourlyTs,
    freshnessAgeSec: latestEventTs === null ? null : Math.max(0, now - latestEventTs),
    majorStaleCount: stale.length,
    staleMajorSymbols: stale,
    sync: { lastSuccessfulSyncAt: at, freshnessStatus, warning, criticalLaneHealthy: freshnessStatus !== "stale" },
  };
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

/**
 * Cause families whose incidents the public status history shows (spec 2.9: cache ratio, FX cached
 * fallback, public mint/burn causes, open circuit groups, db unhealthy; `no-build` is every cache
 * missing). Publication coverage (a stale or missing list snapshot, skipped empty captures) degrades
 * `/api/health` but is not among the spec's public-impact causes.
 */
export const PUBLIC_IMPACT_CAUSES: Readonly<Record<string, boolean>> = {
  "no-build": true,
  "db-unhealthy": true,
  "limiter-unhealthy": true,
  cache: true,
  "fx-cached-fallback": true,
  "circuit-groups-open": true,
  "mint-burn-lane": true,
  "publication-coverage": false,
  "cron-error": true,
  "cron-unhealthy": true,
};

/** Whether a cause code (`<family>` or `<family>:<detail>`) has public impact (PUBLIC_IMPACT_CAUSES; unknown families: false). */
export function causePublicImpact(code: string): boolean {
  return PUBLIC_IMPACT_CAUSES[code.split(":")[0]] ?? false;
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

/**
 * Cadence of the `fx-rates` cache (spec 3.2: the fx source uses its own cadence). ECB reference rates
 * appear once per TARGET working day (`maxAgeSec`). `fresh` up to 4 days (the age up to which a rate
 * is a peg reference, `fx`), `degraded` up to 8 days, `stale` beyond; `none` without any observation.
 */
export const FX_CADENCE = { maxAgeSec: 86400, freshSec: 4 * 86400, degradedSec: 8 * 86400 } as const;
/** Manifest source of decoded on-chain events (recorded logs and the live ledger). */
const ONCHAIN_ENDPOINT = "onchain.events";
/** Manifest source of the ECB reference rates. */
const FX_ENDPOINT = "frankfurter.rates";
/** Manifest source of the stablecoin list snapshot (current supply and the coin universe). */
const LIST_ENDPOINT = "defillama.stablecoins";

/**
 * Circuit group of each circuit name: the independent upstream family the source's numbers derive
 * from, as each source module declares it (`lineage.family`, pipelines/sources/lineage.ts; a test
 * keeps both equal). Alchemy's daily prices copy CoinGecko's, so both are group `coingecko`;
 * Frankfurter serves ECB rates (`ecb`); the USDS status is read from Ethereum nodes like the on-chain
 * logs (`onchain`). Unknown names are their own group.
 */
export const CIRCUIT_GROUPS: Readonly<Record<string, string>> = {
  defillama: "defillama",
  coingecko: "coingecko",
  alchemy: "coingecko",
  binance: "binance",
  frankfurter: "ecb",
  onchain: "onchain",
  usds: "onchain",
  bluechip: "bluechip",
  "defillama-yields": "defillama",
  curve: "curve",
  "dex-subgraph": "dex-subgraph",
};
/**
 * Cache keys spec 2.8 names, in its order, each with the site-data artifact behind it (`fx-rates`
 * has its own cadence, FX_CADENCE). Every one is always present in `caches`: the DEWS stress model
 * publishes as `stress-signals` (key `dews`), the yield producer's freshness is the yield rankings'
 * (key `yield-data`); the artifact's own key is then not repeated. An optional artifact no build
 * publishes yet is listed with `ageSeconds` null, `healthy` false and `sentinelValidationReason`
 * `not-published`, and leaves the status alone (it is reported as not yet available).
 */
export const SPEC_CACHE_KEYS: ReadonlyArray<readonly [key: string, artifact: Artifact | "fx"]> = [
  ["stablecoins", stablecoinsArtifact],
  ["stablecoin-charts", stablecoinChartsArtifact],
  ["usds-status", usdsStatusArtifact],
  ["fx-rates", "fx"],
  ["bluechip-ratings", bluechipRatingsArtifact],
  ["dex-liquidity", dexLiquidityArtifact],
  ["yield-data", yieldRankingsArtifact],
  ["dews", stressSignalsArtifact],
];
/** Health cache key of a site-data artifact: its spec key (SPEC_CACHE_KEYS), else the artifact key. */
export function cacheKeyOf(artifact: string): string {
  return SPEC_CACHE_KEYS.find(([, a]) => a !== "fx" && a.key === artifact)?.[0] ?? artifact;
}
/** Freshness ratios of a cache key: `yield-data` degraded above 2x and stale above 4x (spec 2.8), the generic 8x/12x otherwise. */
export function cacheRatios(key: string): { fresh: number; degraded: number } {
  return key === "yield-data" ? { fresh: 2, degraded: 4 } : GENERIC_RATIOS;
}

/** Open circuit groups from which the top-level status is `degraded` (spec 2.8). */
export const OPEN_GROUPS_DEGRADED = 3;

/** Circuit name (the source) of a manifest endpoint key `<source>.<entity>`. */
export function circuitOf(endpoint: string): string {
  const dot = endpoint.indexOf(".");
  return dot < 0 ? endpoint : endpoint.slice(0, dot);
}

/** Circuit group of a circuit name (CIRCUIT_GROUPS; unknown names are their own group). */
export function circuitGroup(circuit: string): string {
  return CIRCUIT_GROUPS[circuit] ?? circuit;
}

/**
 * One circuit per upstream source of the manifest (spec 2.8 `circuits`), keyed by source name
 * (`defillama`, `coingecko`, `alchemy`, `binance`, `frankfurter`, `onchain`).
 * - A state recorded by a live capture (`manifest.circuits[source]`, the HTTP client's breaker) is
 *   used as is.
 * - Otherwise (recorded builds, sources without an HTTP client) the state is derived from the
 *   source's captures in `manifest.sources` (every endpoint `<source>.*`), read in observation
 *   order as the calls of a breaker: a capture that loaded rows is a success, a rejected capture
 *   (`payload-rejected`, `parse-failed`) a failure. `consecutiveFailures` = rejected captures after
 *   the newest success; `state` = `open` when that count is > 0, else `closed` (a source with no
 *   capture at all made no call, so nothing failed: `closed`, `lastSuccessAt` null);
 *   `lastSuccessAt` = observation time of the newest capture that loaded rows, capped at the build's
 *   as-of (a history file recorded after as-of contributes only rows up to as-of).
 * Sorted by name.
 */
export function circuitsOf(m: Pick<BuildManifest, "asOf" | "sources" | "circuits">): Record<string, CircuitState> {
  const captures = new Map<string, { observedAt: number; loaded: boolean; failed: boolean }[]>();
  for (const name of Object.keys(m.circuits)) captures.set(name, []);
  for (const s of m.sources) {
    const list = captures.get(circuitOf(s.endpoint)) ?? [];
    for (const c of s.captures)
      list.push({ observedAt: c.observedAt, loaded: c.rows > 0, failed: c.rejected !== undefined });
    captures.set(circuitOf(s.endpoint), list);
  }
  const out: Record<string, CircuitState> = {};
  for (const [name, list] of [...captures.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const recorded = m.circuits[name];
    if (recorded) {
      out[name] = recorded;
      continue;
    }
    list.sort((a, b) => a.observedAt - b.observedAt);
    let lastSuccessAt: number | null = null;
    let consecutiveFailures = 0;
    for (const c of list) {
      if (c.loaded) {
        lastSuccessAt = Math.min(c.observedAt, m.asOf);
        consecutiveFailures = 0;
      } else if (c.failed) consecutiveFailures++;
    }
    out[name] = { state: consecutiveFailures > 0 ? "open" : "closed", consecutiveFailures, lastSuccessAt };
  }
  return out;
}

/** `fx-rates` source status from the age (s) of the newest ECB observation (FX_CADENCE; null → `none`). */
export function fxSourceStatus(ageSeconds: number | null): "fresh" | "degraded" | "stale" | "none" {
  if (ageSeconds === null) return "none";
  return ageSeconds <= FX_CADENCE.freshSec ? "fresh" : ageSeconds <= FX_CADENCE.degradedSec ? "degraded" : "stale";
}

const SEVERITY: Record<HealthStatus, number> = { healthy: 0, degraded: 1, stale: 2 };
const impactOf = (s: FreshnessStatus): HealthStatus => (s === "fresh" ? "healthy" : s);
const isoMinute = (t: number) => `${new Date(t * 1000).toISOString().slice(0, 16)}Z`;
/** Human age: seconds, minutes, hours or days. */
function age(sec: number): string {
  if (sec < 120) return `${sec} s`;
  if (sec < 7200) return `${Math.floor(sec / 60)} min`;
  if (sec < 2 * 86400) return `${Math.floor(sec / 3600)} h`;
  return `${Math.floor(sec / 86400)} days`;
}
const counts = (r: Record<string, number>) =>
  Object.entries(r)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

/** What a quality rejection producer's refusals mean for users (manifest `qualityRejections` keys). */
const REJECTION_MEANING: Record<string, string> = {
  peg_monitor:
    "refused price observations are used neither for consensus prices nor for depeg detection (one row per quote in `price_observation_rejections` of ballast.duckdb); `pending-expired-unconfirmed` counts moves that waited for a second independent source and expired unconfirmed, so no incident was published; `lone-contradicted-print` counts consensus prints kept in the price grid but not used as depeg evidence, because both neighbouring prints contradict them and nothing confirms them",
  supply_value_rejections:
    "implausible supply values are left out of every supply figure (rows in `supply_value_rejections` of ballast.duckdb)",
  supply_chain_guard:
    "chain rows of coins whose chains sum to more than their total are withheld from every chain figure; the coins are published with `supplyChainGuard` status `quarantined` (rows in `supply_chain_guard` of ballast.duckdb)",
};

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
}

/** A job is overdue (cause `cron-unhealthy`) when it has not started for 2 × its interval plus this grace (s). */
export const CRON_OVERDUE_GRACE_SEC = 300;

/** Health resource and the causes of its status (what the status history records). */
export interface HealthAssessment {
  health: Health;
  /** One per status-raising finding, in the order found; empty when `healthy`. */
  causes: StatusCause[];
}

/**
 * Health resource (spec 2.8) of the serving build at `now` (Unix s of the clock in force; `clock`
 * says whether the replay clock of a recorded build or the wall clock runs), with the causes of
 * its status. Every age in the body is measured from `now` (= `timestamp`); state store and
 * recorder times are shifted onto that clock (`opts.wallNow`).
 *
 * Caches: every key spec 2.8 names (SPEC_CACHE_KEYS: `dews` ← stress-signals, `yield-data` ← yield
 * rankings; unpublished optional ones listed as `not-published`), then one per other published
 * site-data artifact (age = now − its `dataAsOf`, generic 8×/12× rule on the route budget
 * `maxAgeSec`; `yield-data` 2×/4×), and `fx-rates` (age of the newest ECB observation, FX_CADENCE).
 * Circuits: `circuitsOf(manifest)`. Status, from the spec's rules (cause codes in brackets):
 * - `stale` when any cache is stale (a cache past its stale ratio [`cache:<key>`], `fx-rates`
 *   `stale`/`none` [`fx-cached-fallback`]) or the live mint/burn lane is stale [`mint-burn-lane`];
 *   with no build at all [`no-build`];
 * - else `degraded` when any cache is degraded, the stablecoin list snapshot is stale or missing at
 *   as-of [`publication-coverage:list-snapshot`], an optional recorded capture was empty and
 *   skipped [`publication-coverage:skipped-captures`], ≥ 3 circuit groups (CIRCUIT_GROUPS) have an
 *   open circuit [`circuit-groups-open`], the live mint/burn lane is degraded, the state store is
 *   unavailable [`db-unhealthy`], or the rate limiter's store is [`limiter-unhealthy`];
 * - else `healthy`.
 * Features not yet published, upstream feeds ending before as-of, dropped or refused input and build
 * notes (`manifest.warnings`) are reported as warnings without effect on status. Never throws.
 */
export function assessHealth(
  build: { manifest: BuildManifest } | null,
  now: number,
  clock: "replay" | "wall",
  opts: HealthOptions = {},
): HealthAssessment {
  const impacts: HealthStatus[] = [];
  const causes: StatusCause[] = [];
  /** Records an impact on the status; a non-healthy one with its cause. */
  const raise = (s: HealthStatus, code: string, detail: string) => {
    impacts.push(s);
    if (s !== "healthy") causes.push({ code, status: s, publicImpact: causePublicImpact(code), detail });
  };
  const worst = (): HealthStatus =>
    impacts.reduce<HealthStatus>((w, s) => (SEVERITY[s] > SEVERITY[w] ? s : w), "healthy");
  // Times the state store and the recorder took on the wall clock, on the clock of `now`.
  const shift = now - (opts.wallNow ?? now);
  const onClockAt = (t: number) => t + shift;
  const onClock = (t: number | null) => (t === null ? null : onClockAt(t));
  const first: string[] = [];
  const store = opts.stateStore && {
    ...opts.stateStore,
    lastOkAt: onClock(opts.stateStore.lastOkAt),
    lastFailureAt: onClock(opts.stateStore.lastFailureAt),
  };
  if (store?.state === "unavailable") {
    raise("degraded", "db-unhealthy", `state store unavailable: ${store.reason ?? "unavailable"}`);
    first.push(
      `state store (${store.backend ?? "unknown backend"}) unavailable (sets status degraded): ${store.reason ?? "unavailable"}, circuit ${store.circuit}; last ok ${store.lastOkAt === null ? "never" : `${isoMinute(store.lastOkAt)} (${age(Math.max(0, now - store.lastOkAt))} before now)`}. Requests that need an API key answer 503 until it is back; /api/health and other key-exempt routes still answer.`,
    );
  }
  const limiter = opts.limiterStore && { ...opts.limiterStore, since: onClock(opts.limiterStore.since) };
  if (limiter?.state === "unavailable") {
    const since =
      limiter.since === null ? "" : ` since ${isoMinute(limiter.since)} (${age(Math.max(0, now - limiter.since))})`;
    raise("degraded", "limiter-unhealthy", `rate limiter store unavailable: ${limiter.reason ?? "unavailable"}`);
    first.push(
      `rate limiter store (${limiter.backend}) unavailable (sets status degraded): ${limiter.reason ?? "unavailable"}${since}. Requests that need an API key answer 503 (Retry-After: 60) until it is back, except hot cache hits of verified keys; /api/health and other key-exempt routes still answer.`,
    );
  }
  const recorder = opts.statusHistory && {
    ...opts.statusHistory,
    lastRecordedAt: onClock(opts.statusHistory.lastRecordedAt),
  };
  const recorderWarning =
    recorder?.state === "unavailable"
      ? [
          `status history recording failing (no effect on status): ${recorder.lastError ?? "unknown error"}; ${recorder.pendingObservations} observation(s) kept in memory and written once the store answers; last written ${recorder.lastRecordedAt === null ? "never" : `${isoMinute(recorder.lastRecordedAt)} (${age(Math.max(0, now - recorder.lastRecordedAt))} before now)`}. /api/public-status-history may lag until then.`,
        ]
      : [];
  const extra = {
    ...(store ? { stateStore: store } : {}),
    ...(limiter ? { limiterStore: limiter } : {}),
    ...(recorder ? { statusHistory: recorder } : {}),
  };
  const telegramSummary =
    typeof opts.telegram === "object"
      ? { ...opts.telegram, lastDispatchAt: onClock(opts.telegram.lastDispatchAt) }
      : null;
  const telegramWarning =
    opts.telegram === undefined
      ? [
          "messaging bot not configured (no effect on status): TELEGRAM_BOT_TOKEN is unset, so /api/telegram-pulse, /api/telegram-mini-app/session and /api/telegram-mini-app/mutate answer 503 and no chat alerts are sent.",
        ]
      : opts.telegram === "unavailable"
        ? [
            "messaging bot state unavailable (no effect on status): its state store did not answer; telegramSummary is null until it does.",
          ]
        : [];
  const corruptWarning = opts.corruptStored?.length
    ? [
        `stored dated payloads fail their schema (no effect on status): ${opts.corruptStored.join(", ")}. The routes serving them answer 500 and never a partial body; restore the file (a snapshot day: delete it and run \`make backfill\` for that day, which rebuilds the same bytes from the recorded inputs).`,
      ]
    : [];
  const storageWarning = opts.storageFailure
    ? [
        `published storage unreadable (no effect on status): ${opts.storageFailure.error} for ${age(Math.max(0, Math.round((opts.wallNow ?? now) - opts.storageFailure.sinceMs / 1000)))}. ${build ? "The build in memory keeps serving; files not yet read answer 503 and a newer build is picked up once the store answers." : "Nothing can be served until the store answers."}`,
      ]
    : [];
  const pointerWarning = opts.pointerFailure
    ? [
        `published pointer unreadable (no effect on status): ${opts.pointerFailure.error} for ${age(Math.max(0, Math.round((opts.wallNow ?? now) - opts.pointerFailure.sinceMs / 1000)))}. ${build ? `Build ${build.manifest.buildId} keeps serving; ` : ""}run \`tsx build/cli.ts restore --build <id>\` (or publish a build) to write it again.`,
      ]
    : [];
  // The scheduler's jobs: error runs and overdue jobs (public-impact causes, spec 2.9), partial runs as notes.
  const sched = opts.schedule ?? null;
  const cronFirst: string[] = [],
    cronInfo: string[] = [];
  if (sched)
    for (const [name, j] of Object.entries(sched.jobs).sort(([a], [b]) => a.localeCompare(b))) {
      const last = j.lastRun;
      if (last?.status === "error") {
        raise("degraded", `cron-error:${name}`, `scheduled job ${name}: last run failed`);
        cronFirst.push(
          `scheduled job ${name}: cron error run (sets status degraded): the run of ${isoMinute(onClockAt(last.startedAt))} published nothing: ${last.error ?? "unknown error"}; ${j.consecutiveErrors} consecutive error run(s), last success ${j.lastSuccessAt === null ? "never" : isoMinute(onClockAt(j.lastSuccessAt))}. Data stays as of the last published build.`,
        );
      } else if (last?.status === "partial") {
        cronInfo.push(
          `scheduled job ${name}: upstream calls failed in its last run (no effect on status): ${last.captureErrors.map((e) => `${e.endpoint}: ${e.message}`).join("; ")}. The build used the newest earlier capture of these feeds.`,
        );
      }
      const since = last?.startedAt ?? sched.startedAt;
      const stoppedAt = sched.stoppedAt;
      const idle = (opts.wallNow ?? now) - since;
      if (idle > 2 * j.intervalSec + CRON_OVERDUE_GRACE_SEC) {
        raise("degraded", `cron-unhealthy:${name}`, `scheduled job ${name} overdue`);
        cronFirst.push(
          `scheduled job ${name} overdue (sets status degraded): no run since ${isoMinute(onClockAt(since))} (${age(idle)}; cadence ${age(j.intervalSec)})${stoppedAt !== null ? `; the scheduler stopped at ${isoMinute(onClockAt(stoppedAt))}` : ""}. Start \`tsx build/cli.ts schedule\` (docs/runbooks/running-live.md).`,
        );
      }
    }
  first.push(...cronFirst);
  /** Producer job and cadence of a cache key: the scheduled job that refreshes its inputs, else `build` (a build run by hand). */
  const producerOf = (
    key: string,
  ): { producerJob: string; producerIntervalSec: number | null; lastSuccessAt: number | null } => {
    const job = producerJobOf(key),
      j = sched?.jobs[job];
    return j
      ? { producerJob: job, producerIntervalSec: j.intervalSec, lastSuccessAt: onClock(j.lastSuccessAt) }
      : { producerJob: "build", producerIntervalSec: null, lastSuccessAt: null };
  };
  if (!build) {
    raise("stale", "no-build", "no published build: every data route answers 503");
    return {
      health: {
        status: "stale",
        timestamp: now,
        warnings: [
          ...first,
          ...cronInfo,
          "no published build: nothing has been published yet (or latest.json is unreadable); every data route answers 503 until a build is published.",
          ...storageWarning,
          ...pointerWarning,
          ...recorderWarning,
          ...corruptWarning,
          ...telegramWarning,
        ],
        caches: {},
        blacklist: null,
        mintBurn: null,
        circuits: {},
        telegramSummary,
        clock: { mode: clock, buildId: null, asOf: null },
        ...extra,
      },
      causes,
    };
  }
  const m = build.manifest;
  const info: string[] = [];
  const caches: Record<string, CacheStatus> = {};

  // Site-data caches: the generic 8x/12x rule on each route budget (yield-data 2x/4x), under the spec's key.
  const late: Record<"degraded" | "stale", string[]> = { degraded: [], stale: [] };
  for (const f of m.files) {
    const key = cacheKeyOf(f.artifact);
    if (
      !f.path.startsWith("site-data/") ||
      caches[key] ||
      f.maxAgeSec === undefined ||
      ONCHAIN_SECTION_ARTIFACTS.has(f.artifact)
    )
      continue;
    const ratios = cacheRatios(key);
    const { lastSuccessAt, ...producer } = producerOf(key);
    // A file of unknown data time: its freshness falls back to the producer job's last successful run (spec 2.8 `cron-fallback`).
    const cronFallback = f.dataAsOf == null && lastSuccessAt !== null;
    const fr = assessFreshness(now, cronFallback ? lastSuccessAt : f.dataAsOf, f.maxAgeSec, ratios);
    caches[key] = {
      ageSeconds: fr.ageSeconds,
      maxAge: f.maxAgeSec,
      healthy: fr.status !== "stale",
      ...producer,
      endpointMaxAge: f.maxAgeSec,
      availabilityMaxAge: f.maxAgeSec * ratios.degraded,
      endpointBudgetReason: "route-budget",
      availabilityBudgetReason: `${ratios.degraded}x-route-budget`,
      freshnessSource: cronFallback ? "cron-fallback" : "freshness-sentinel",
      sentinelValidationReason: cronFallback ? "no-data-time" : null,
      buildId: m.buildId,
      artifact: f.artifact,
    };
    const what = `${key}${key === f.artifact ? "" : ` (${f.artifact})`} ${fr.ageSeconds === null ? "of unknown age" : `${age(fr.ageSeconds)} old`} (budget ${age(f.maxAgeSec)}${ratios === GENERIC_RATIOS ? "" : `, ${ratios.fresh}x/${ratios.degraded}x`})`;
    raise(impactOf(fr.status), `cache:${key}`, what);
    if (fr.status !== "fresh") late[fr.status].push(what);
  }
  // Spec keys whose artifact this build does not publish: optional ones are not yet available (no
  // effect on status, listed below); a required one missing would be every reader's 503: stale.
  for (const [key, artifact] of SPEC_CACHE_KEYS) {
    if (artifact === "fx" || caches[key]) continue;
    const ratios = cacheRatios(key);
    caches[key] = {
      ageSeconds: null,
      maxAge: artifact.maxAgeSec,
      healthy: false,
      producerJob: producerOf(key).producerJob,
      producerIntervalSec: producerOf(key).producerIntervalSec,
      endpointMaxAge: artifact.maxAgeSec,
      availabilityMaxAge: artifact.maxAgeSec * ratios.degraded,
      endpointBudgetReason: "route-budget",
      availabilityBudgetReason: `${ratios.degraded}x-route-budget`,
      freshnessSource: "freshness-sentinel",
      sentinelValidationReason: "not-published",
      buildId: m.buildId,
      artifact: artifact.key,
    };
    if (!artifact.optional) {
      const what = `${key} not published by this build`;
      raise("stale", `cache:${key}`, what);
      late.stale.push(what);
    }
  }
  for (const s of ["stale", "degraded"] as const) {
    if (late[s].length) {
      first.push(
        `caches ${s} (sets status ${s}): ${late[s].join("; ")}. Published data is older than ${s === "stale" ? "12× its route budget (yield-data: 4×)" : "8× its route budget (yield-data: 2×)"}: these routes answer with \`Warning: 110\` and \`Cache-Control: no-store\`${s === "stale" ? " and `X-Data-Freshness: stale`" : ""} until a newer build is published.`,
      );
    }
  }

  // fx-rates: its own cadence (FX_CADENCE).
  const fx = m.sources.find((s) => s.endpoint === FX_ENDPOINT);
  const fxAt = fx?.newestObservedAt ?? null;
  const fxAge = fxAt === null ? null : Math.max(0, Math.floor(now) - fxAt);
  const fxStatus = fxSourceStatus(fxAge);
  const fxImpact: HealthStatus = fxStatus === "fresh" ? "healthy" : fxStatus === "degraded" ? "degraded" : "stale";
  const fxWarning =
    fxStatus === "fresh"
      ? null
      : `${fxAt === null || fxAge === null ? "no ECB reference rate has been observed" : `ECB reference rates last observed ${isoMinute(fxAt)}, ${age(fxAge)} before now`} (fresh up to 4 days, degraded up to 8): non-USD fiat supply is valued with the most recent ECB rate if at most 365 days old (\`fxFallbackRates\` in /api/stablecoins), and non-USD coins are judged against the median of ≥ 3 same-peg coins where one exists, else not judged for depegs (\`referenceSource\` \`fx-fallback\` in /api/peg-summary).`;
  caches["fx-rates"] = {
    ageSeconds: fxAge,
    maxAge: FX_CADENCE.maxAgeSec,
    healthy: fxStatus === "fresh" || fxStatus === "degraded",
    producerJob: producerOf("fx-rates").producerJob,
    producerIntervalSec: producerOf("fx-rates").producerIntervalSec,
    endpointMaxAge: FX_CADENCE.maxAgeSec,
    availabilityMaxAge: FX_CADENCE.degradedSec,
    endpointBudgetReason: "ecb-working-day",
    availabilityBudgetReason: "fx-cadence-8-days",
    freshnessSource: "freshness-sentinel",
    sentinelValidationReason: null,
    mode: fxStatus === "fresh" ? "live" : "cached-fallback",
    sourceUpdatedAt: fxAt,
    sourceAgeSeconds: fxAge,
    sourceStatus: fxStatus,
    warning: fxWarning,
    consecutiveFallbackRuns: null,
  };
  raise(
    fxImpact,
    "fx-cached-fallback",
    fxAge === null ? "no ECB reference rate observed" : `ECB rates ${age(fxAge)} old (fx ${fxStatus})`,
  );
  if (fxWarning) first.push(`fx-rates cache ${fxStatus} (sets status ${fxImpact}): ${fxWarning}`);

  // Publication coverage: the list snapshot at as-of.
  const list = m.sources.find((s) => s.endpoint === LIST_ENDPOINT);
  if (list && list.status !== "ok") {
    raise(
      "degraded",
      "publication-coverage:list-snapshot",
      `stablecoin list snapshot ${list.newestObservedAt === null ? "missing" : "stale"} at as-of`,
    );
    first.push(
      list.newestObservedAt === null
        ? "stablecoin list snapshot missing (sets status degraded: publication coverage incomplete): no DefiLlama /stablecoins capture at or before as-of; current supply and the coin universe come from supply history (points at most 3 days old), so coins without recent history are missing from /api/stablecoins."
        : `stablecoin list snapshot stale (sets status degraded: publication coverage incomplete): the newest DefiLlama /stablecoins capture is from ${isoMinute(list.newestObservedAt)}, ${age(Math.max(0, m.asOf - list.newestObservedAt))} before as-of; current supply and the coin universe are as of that capture.`,
    );
  }

  // Recorded captures skipped as empty: their figures are missing from this build.
  const skippedCaptures = m.skippedCaptures ?? [];
  if (skippedCaptures.length) {
    raise(
      "degraded",
      "publication-coverage:skipped-captures",
      `${skippedCaptures.length} empty recorded capture(s) skipped`,
    );
    first.push(
      `recorded captures empty and skipped (sets status degraded: publication coverage incomplete): ${skippedCaptures.map((c) => `${c.file} (${c.endpoint}, ${c.reason})`).join("; ")}. Nothing from them is in this build; figures that rest on them fall back to other sources or are missing (manifest \`skippedCaptures\`).`,
    );
  }

  // Circuits and circuit groups.
  const circuits = circuitsOf(m);
  const openGroups = new Map<string, string[]>();
  for (const [name, c] of Object.entries(circuits)) {
    if (c.state === "open") openGroups.set(circuitGroup(name), [...(openGroups.get(circuitGroup(name)) ?? []), name]);
  }
  if (openGroups.size) {
    const many = openGroups.size >= OPEN_GROUPS_DEGRADED;
    if (many)
      raise(
        "degraded",
        "circuit-groups-open",
        `${openGroups.size} circuit groups open: ${[...openGroups.keys()].sort().join(", ")}`,
      );
    const detail = [...openGroups.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([g, names]) =>
          `${g} (${names
            .map((n) => {
              const lastSuccessAt = circuits[n].lastSuccessAt;
              return `${n}: ${circuits[n].consecutiveFailures} consecutive failures, last success ${lastSuccessAt === null ? "never" : isoMinute(lastSuccessAt)}`;
            })
            .join("; ")})`,
      );
    (many ? first : info).push(
      `circuit groups open (${many ? "sets status degraded" : `no effect on status below ${OPEN_GROUPS_DEGRADED} groups`}): ${detail.join(", ")}. Their data is carried from the last successful capture.`,
    );
  }

  // Upstream feeds: freshness at as-of (no effect on status beyond the rules above).
  const ended = m.sources.flatMap((s) => {
    const at = s.newestObservedAt;
    return s.status === "stale" && at !== null
      ? [`${s.endpoint} ${isoMinute(at)} (${age(Math.max(0, m.asOf - at))} before as-of)`]
      : [];
  });
  if (ended.length)
    info.push(
      `upstream feeds older than their refresh budget at as-of (no effect on status): ${ended.join(", ")}. Nothing newer than these captures comes from them: recorded archives end there, or live captures failed since.`,
    );
  const absent = m.sources.filter((s) => s.status === "missing").map((s) => s.endpoint);
  if (absent.length)
    info.push(
      `upstream feeds without any capture at or before as-of (no effect on status): ${absent.join(", ")}. Nothing from them is in this build; prices and supply rest on the other sources (see \`consensusSources\` and \`supplySource\` in /api/stablecoins).`,
    );

  // Input quality: dropped values, skipped recorded rows, quality-rule refusals.
  const dropped = m.sources
    .filter((s) => sum(s.dropped) > 0)
    .map((s) => `${s.endpoint} ${sum(s.dropped)} (${counts(s.dropped)})`);
  if (dropped.length)
    info.push(
      `malformed upstream values dropped at load (no effect on status): ${dropped.join("; ")}. Only the bad values or rows are left out; the rest of each payload is used (manifest \`sources[].dropped\`).`,
    );
  const skipped = Object.entries(m.readerDropped)
    .filter(([, r]) => sum(r) > 0)
    .map(([file, r]) => `${file} ${sum(r)} (${counts(r)})`);
  if (skipped.length)
    info.push(
      `recorded-file rows skipped by their reader (no effect on status): ${skipped.join("; ")} (manifest \`readerDropped\`, first problems with line numbers in \`readerProblems\`).`,
    );
  for (const [producer, reasons] of Object.entries(m.qualityRejections ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    if (!sum(reasons)) continue;
    info.push(
      `${producer} quality rules refused input (no effect on status): ${counts(reasons)}; ${REJECTION_MEANING[producer] ?? "refused rows are left out of its outputs"}.`,
    );
  }
  for (const w of m.warnings ?? []) info.push(`build note (no effect on status): ${w}`);
  // The live lane's last sync: the on-chain ledger capture of this build (manifest), null without one.
  const liveSync =
    m.sources
      .find((x) => x.endpoint === ONCHAIN_ENDPOINT)
      ?.captures.filter((c) => c.origin === "live")
      .map((c) => c.observedAt) ?? [];
  const mintBurn = mintBurnHealth(opts.onchain?.mintBurn ?? null, liveSync.length ? Math.max(...liveSync) : null, now);
  if (mintBurn) {
    const sync = mintBurn.sync;
    if (sync.lastSuccessfulSyncAt !== null && sync.freshnessStatus !== "fresh") {
      raise(sync.freshnessStatus, "mint-burn-lane", `mint/burn lane ${sync.freshnessStatus}`);
      first.push(`mint/burn lane ${sync.freshnessStatus} (sets status ${sync.freshnessStatus}): ${sync.warning}`);
    } else if (sync.warning) info.push(`mint/burn lane (no effect on status): ${sync.warning}`);
  }
  const bl = opts.onchain?.blacklist ?? null;
  if (bl && bl.missingAmounts > 0) {
    info.push(
      `freeze ledger amount gaps (no effect on status; spec 2.8 escalates blacklist severity only when its loader fails): ${bl.missingAmounts} of ${bl.totalEvents} events have no amount yet (${(bl.missingRatio * 100).toFixed(1)}%), ${bl.recentMissingAmounts} in the last 30 days; /api/blacklist-summary \`dataQuality\` applies the 1%/2% thresholds.`,
    );
  }
  info.push(...storageWarning, ...pointerWarning, ...corruptWarning);
  for (const [feature, paths] of Object.entries(notYetAvailableFeatures(new Set(m.files.map((f) => f.path))))) {
    info.push(
      `not yet available (no effect on status): ${feature} — no build publishes it yet; ${paths.join(", ")} answer${paths.length === 1 ? "s" : ""} 503 \`Data not yet available: ${feature}\`.`,
    );
  }

  // Spec keys first, in the spec's order, then the other artifacts in manifest order.
  const ordered: Record<string, CacheStatus> = {};
  for (const [key] of SPEC_CACHE_KEYS) if (caches[key]) ordered[key] = caches[key];
  for (const [key, c] of Object.entries(caches)) ordered[key] ??= c;
  return {
    health: {
      status: worst(),
      timestamp: now,
      warnings: [...first, ...cronInfo, ...info, ...recorderWarning, ...telegramWarning],
      caches: ordered,
      blacklist: bl,
      mintBurn,
      circuits,
      telegramSummary,
      clock: { mode: clock, buildId: m.buildId, asOf: m.asOf },
      ...extra,
    },
    causes,
  };
}

/** The Health resource of `assessHealth` (without the causes). Never throws. */
export function buildHealth(
  build: { manifest: BuildManifest } | null,
  now: number,
  clock: "replay" | "wall",
  opts: HealthOptions = {},
): Health {
  return assessHealth(build, now, clock, opts).health;
}
