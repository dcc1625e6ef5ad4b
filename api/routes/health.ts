import { BlacklistSummarySchema, blacklistSummaryArtifact } from "../../site-data/blacklist.ts";
import {
  MintBurnHourlySchema,
  mintBurnFlowsArtifact,
  MintBurnLedgerSchema,
  mintBurnLedgerArtifact,
} from "../../site-data/mint-burn.ts";
import { assessHealth, type HealthAssessment, type OnchainHealthInputs } from "../health.ts";
import { type ClockMode, serviceNow } from "../lib/clock.ts";
import { type PublishedStore, type ServingBuild, StorageUnavailableError } from "../lib/published.ts";
import type { StatusObserver } from "../lib/status-history.ts";
import { notYetAvailableFeatures } from "./not-yet-available.ts";
import type { RouteDecl, RouteServices } from "./route.ts";
import { SCHEDULE_STATUS_KEY, type ScheduleStatus, ScheduleStatusSchema } from "../../site-data/schedule-log.ts";
import { declareTag } from "./tags.ts";

/** How long a read of the scheduler's run log is reused (ms): health may be polled often, and on S3 each read is a GET. */
const SCHEDULE_READ_TTL_MS = 1000;
const scheduleReads = new WeakMap<PublishedStore, { atMs: number; value: Promise<ScheduleStatus | null> }>();

/**
 * The scheduler's run log (`scheduler/status.json` in the published storage, written by
 * `tsx build/cli.ts schedule`) through the store's object reader (fs or S3 alike); null when no
 * scheduler writes here or the object is unreadable.
 */
export function readScheduleStatus(
  store: PublishedStore | undefined,
  nowMs = Date.now(),
): Promise<ScheduleStatus | null> {
  if (!store) return Promise.resolve(null);
  const hit = scheduleReads.get(store);
  if (hit && nowMs - hit.atMs < SCHEDULE_READ_TTL_MS) return hit.value;
  const value = store
    .object(SCHEDULE_STATUS_KEY)
    .then((raw) => {
      if (!raw) return null;
      const parsed = ScheduleStatusSchema.safeParse(JSON.parse(Buffer.from(raw).toString("utf8")));
      return parsed.success ? parsed.data : null;
    })
    .catch(() => null);
  scheduleReads.set(store, { atMs: nowMs, value });
  return value;
}

/** An unreadable artifact reads as absent, except storage that does not answer (rethrown). */
const unlessStorageDown = (err: unknown): undefined => {
  if (err instanceof StorageUnavailableError) throw err;
  return undefined;
};

/** Health reads the on-chain artifacts once per build and keeps only what it derives (the ledger parses to ~12 MB of heap). */
const once = { keep: false } as const;

/**
 * What health reports of the on-chain artifacts of `build` (memoised per build): the freeze
 * summary's amount gaps, and the mint/burn ledger's newest event per coin and newest hour. A
 * section whose artifact is missing or unreadable is null. The parsed artifacts are not kept.
 */
function onchainInputs(build: ServingBuild | null): Promise<OnchainHealthInputs | undefined> {
  if (!build) return Promise.resolve(undefined);
  return build.memo("health-onchain", async () => {
    // Read at once (a slow store costs one read deadline, not three); storage that does not answer
    // rejects, so the memo is not kept and a later health call reads again.
    const [summary, ledger, flows] = await Promise.all([
      build
        .payload(blacklistSummaryArtifact.outputs.main.path, (x) => BlacklistSummarySchema.parse(x), once)
        .catch(unlessStorageDown),
      build
        .payload(mintBurnLedgerArtifact.outputs.main.path, (x) => MintBurnLedgerSchema.parse(x), once)
        .catch(unlessStorageDown),
      build
        .payload(mintBurnFlowsArtifact.outputs.main.path, (x) => MintBurnHourlySchema.parse(x), once)
        .catch(unlessStorageDown),
    ]);
    const latestEventTsBySymbol: Record<string, number> = {};
    for (const e of ledger?.events ?? [])
      latestEventTsBySymbol[e.stablecoin] = Math.max(latestEventTsBySymbol[e.stablecoin] ?? 0, e.timestamp);
    const hours = (flows?.coins ?? []).flatMap((c) => c.hourly.map((h) => h.hourTs));
    return {
      blacklist: summary
        ? (({ missing, recentMissing, recentWindowSec, missingRatio }) => ({
            totalEvents: summary.totalEvents,
            missingAmounts: missing,
            recentMissingAmounts: recentMissing,
            recentWindowSec,
            missingRatio,
          }))(summary.dataQuality.amountGaps)
        : null,
      mintBurn: ledger
        ? {
            totalEvents: ledger.events.length,
            latestEventTsBySymbol,
            latestHourlyTs: hours.length ? Math.max(...hours) : null,
          }
        : null,
    };
  });
}

/**
 * The health assessment of `build` at service time `now` (Unix s; `wallNow` the wall clock of the
 * same instant), with every input the process has: state store and status-history recorder
 * status from `services`, the on-chain sections from the build, the features not yet available from
 * the route table. `/api/health`, the public status
 * history's `currentStatus` and the status recorder all use it, so they agree. Never throws.
 */
export async function servingHealth(
  build: ServingBuild | null,
  now: number,
  clock: "replay" | "wall",
  wallNow: number,
  services: RouteServices,
  store?: PublishedStore,
): Promise<HealthAssessment> {
  // Inputs read at once, so a hung dependency costs health one deadline (storage's read deadline).
  const [telegram, onchain, schedule] = await Promise.all([
    services.telegram ? services.telegram.summary(wallNow).catch(() => "unavailable" as const) : undefined,
    onchainInputs(build).catch(() => undefined),
    readScheduleStatus(store),
  ]);
  return assessHealth(build, now, clock, {
    stateStore: services.stateStore?.(),
    limiterStore: services.limiterStore?.(),
    statusHistory: services.statusHistory?.recorder?.(),
    onchain,
    wallNow,
    corruptStored: store?.corruptObjects().map((o) => o.key),
    storageFailure: store?.storageFailure(),
    pointerFailure: store?.pointerFailure(),
    telegram,
    schedule,
    notYetAvailable: notYetAvailableFeatures,
  });
}

/**
 * What the status recorder observes: the serving build's health at the current service time, as
 * `/api/health` would answer now (`serviceNow` of the app's clock mode and `nowMs`).
 */
export function statusObserver(deps: {
  store: PublishedStore;
  clockMode: ClockMode;
  nowMs?: () => number;
  services: RouteServices;
}): StatusObserver {
  const nowMs = deps.nowMs ?? Date.now;
  return async () => {
    const build = await deps.store.build();
    const { now, clock, wallNow } = serviceNow(build, deps.clockMode, nowMs());
    const { health, causes } = await servingHealth(build, now, clock, wallNow, deps.services, deps.store);
    return { raw: health.status, causes };
  };
}

/** `/api/health` (spec 2.8): exempt from key, never cached by the API (it reports live dependency state). */
export const HEALTH_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "getHealth",
    method: "GET",
    path: "/api/health",
    lane: "public",
    tag: declareTag("health", "Service health and freshness of every cache."),
    cache: "realtime",
    meta: false,
    cacheable: false,
    summary: "Service health (exempt from key)",
    description:
      "Health resource (spec 2.8). `caches` lists the eight keys spec 2.8 names first (unpublished optional feeds with `ageSeconds` null and `sentinelValidationReason` `not-published`, without effect on status). `timestamp` is the clock in force and every age is measured from it; `clock` tells whether the replay clock (recorded builds) or the wall clock is in force; `stateStore` reports the key store (state, circuit breaker, backend, a generic reason, never driver text), `limiterStore` the rate limiter's store (`state`, `backend` redis or memory, `since` when the state began, a generic `reason`; unavailable sets status degraded, cause `limiter-unhealthy`) and `statusHistory` this process's status-history recorder; `blacklist` gives the freeze ledger's amount gaps (never escalating status), `mintBurn` the mint/burn ledger and its live lane (which sets status only when the build has a live ledger). See docs/health.md, \"Health of a recorded build\".",
    handler: async (ctx) => ({
      payload: (await servingHealth(ctx.build, ctx.now, ctx.clock, ctx.wallNow, ctx.services, ctx.store)).health,
      dataAsOf: null,
    }),
  },
];
