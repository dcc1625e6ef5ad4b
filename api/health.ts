/**
 * Health of the serving build (spec 2.8, /api/health): a set of checks, one module per aspect under
 * api/health/ (state and limiter stores, scheduler jobs, site-data caches, fx-rates, publication
 * coverage, circuits, upstream feeds, input quality, on-chain sections, storage and pointer, the
 * status-history recorder, the messaging bot, features not yet available), each returning its part
 * of the payload with the causes it raises and its warnings, composed here. Health does not import the
 * route table: its caller passes the table's view of features not yet available
 * (`HealthOptions.notYetAvailable`).
 */
import type { BuildManifest } from "../site-data/manifest.ts";
import { noBuildCheck, pointerCheck } from "./health/build.ts";
import { cachesCheck, orderedCaches } from "./health/caches.ts";
import { worstStatus } from "./health/causes.ts";
import { circuitsCheck } from "./health/circuits.ts";
import { coverageCheck } from "./health/coverage.ts";
import { healthClock } from "./health/format.ts";
import { fxCheck } from "./health/fx.ts";
import { inputQualityCheck } from "./health/input-quality.ts";
import { jobsCheck, producersOf } from "./health/jobs.ts";
import { limiterStoreCheck } from "./health/limiter-store.ts";
import { notYetAvailableCheck } from "./health/not-yet-available.ts";
import { onchainCheck } from "./health/onchain.ts";
import { stateStoreCheck } from "./health/state-store.ts";
import { statusHistoryCheck } from "./health/status-history.ts";
import { corruptStoredCheck, storageCheck } from "./health/storage.ts";
import { telegramCheck } from "./health/telegram.ts";
import type { Check, Health, HealthAssessment, HealthOptions, StatusCause } from "./health/types.ts";
import { upstreamCheck } from "./health/upstream.ts";

export { ONCHAIN_SECTION_ARTIFACTS, SPEC_CACHE_KEYS, cacheKeyOf, cacheRatios } from "./health/caches.ts";
export { PUBLIC_IMPACT_CAUSES, causePublicImpact } from "./health/causes.ts";
export { CIRCUIT_GROUPS, OPEN_GROUPS_DEGRADED, circuitGroup, circuitOf, circuitsOf } from "./health/circuits.ts";
export { FX_CADENCE, fxSourceStatus } from "./health/fx.ts";
export { CRON_OVERDUE_GRACE_SEC } from "./health/jobs.ts";
export type {
  BlacklistHealth,
  CacheStatus,
  CircuitState,
  Health,
  HealthAssessment,
  HealthOptions,
  HealthStatus,
  MintBurnHealth,
  NotYetAvailable,
  OnchainHealthInputs,
  StateStoreHealth,
  StatusCause,
  StatusHistoryHealth,
} from "./health/types.ts";

/** Causes and warnings of checks in order: every cause, the warnings that set the status, then the notes in `notesOrder`. */
function collect(statusOrder: readonly Check<unknown>[], notesOrder: readonly Check<unknown>[]) {
  return {
    causes: statusOrder.flatMap((c) => c.causes) as StatusCause[],
    warnings: [...statusOrder.flatMap((c) => c.statusWarnings), ...notesOrder.flatMap((c) => c.notes)],
  };
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
  const at = healthClock(now, opts.wallNow);
  const store = stateStoreCheck(opts.stateStore, at);
  const limiter = limiterStoreCheck(opts.limiterStore, at);
  const recorder = statusHistoryCheck(opts.statusHistory, at);
  const telegram = telegramCheck(opts.telegram, at);
  const jobs = jobsCheck(opts.schedule ?? null, at);
  const storage = storageCheck(opts.storageFailure, build !== null, at);
  const pointer = pointerCheck(opts.pointerFailure, build?.manifest.buildId ?? null, at);
  const corrupt = corruptStoredCheck(opts.corruptStored);
  const services = {
    ...(store.section ? { stateStore: store.section } : {}),
    ...(limiter.section ? { limiterStore: limiter.section } : {}),
    ...(recorder.section ? { statusHistory: recorder.section } : {}),
  };
  if (!build) {
    const none = noBuildCheck();
    const { causes, warnings } = collect(
      [store, limiter, jobs, none],
      [jobs, none, storage, pointer, recorder, corrupt, telegram],
    );
    return {
      health: {
        status: worstStatus(causes),
        timestamp: now,
        warnings,
        caches: {},
        blacklist: null,
        mintBurn: null,
        circuits: {},
        telegramSummary: telegram.section,
        clock: { mode: clock, buildId: null, asOf: null },
        ...services,
      },
      causes,
    };
  }
  const m = build.manifest;
  const producerOf = producersOf(opts.schedule ?? null, at);
  const caches = cachesCheck(m, now, producerOf);
  const fx = fxCheck(m, now, producerOf("fx-rates"));
  const circuits = circuitsCheck(m);
  const onchain = onchainCheck(m, opts.onchain, now);
  const { causes, warnings } = collect(
    [store, limiter, jobs, caches, fx, coverageCheck(m), circuits, onchain],
    [
      jobs,
      circuits,
      upstreamCheck(m),
      inputQualityCheck(m),
      onchain,
      storage,
      pointer,
      corrupt,
      notYetAvailableCheck(m, opts.notYetAvailable),
      recorder,
      telegram,
    ],
  );
  return {
    health: {
      status: worstStatus(causes),
      timestamp: now,
      warnings,
      caches: orderedCaches({ ...caches.section, "fx-rates": fx.section }),
      blacklist: onchain.section.blacklist,
      mintBurn: onchain.section.mintBurn,
      circuits: circuits.section,
      telegramSummary: telegram.section,
      clock: { mode: clock, buildId: m.buildId, asOf: m.asOf },
      ...services,
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
