import { bluechipRatingsArtifact } from "../../site-data/bluechip-ratings.ts";
import type { Artifact } from "../../site-data/contract.ts";
import { dexLiquidityArtifact } from "../../site-data/dex-liquidity.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { stablecoinChartsArtifact } from "../../site-data/stablecoin-charts.ts";
import { stablecoinsArtifact } from "../../site-data/stablecoins.ts";
import { stressSignalsArtifact } from "../../site-data/stress-signals.ts";
import { usdsStatusArtifact } from "../../site-data/usds-status.ts";
import { yieldRankingsArtifact } from "../../site-data/yields.ts";
import { assessFreshness, type FreshnessStatus, GENERIC_RATIOS } from "../lib/freshness.ts";
import { causesOf, check } from "./causes.ts";
import { age } from "./format.ts";
import type { Producer } from "./jobs.ts";
import type { CacheStatus, Check, HealthStatus, StatusCause } from "./types.ts";

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

/** Artifacts reported in the `blacklist` / `mintBurn` sections instead of `caches` (spec 2.8: blacklist never escalates status). */
export const ONCHAIN_SECTION_ARTIFACTS = new Set(["blacklist", "blacklist-summary", "mint-burn", "mint-burn-flows"]);

/** Health cache key of a site-data artifact: its spec key (SPEC_CACHE_KEYS), else the artifact key. */
export function cacheKeyOf(artifact: string): string {
  return SPEC_CACHE_KEYS.find(([, a]) => a !== "fx" && a.key === artifact)?.[0] ?? artifact;
}

/** Freshness ratios of a cache key: `yield-data` degraded above 2x and stale above 4x (spec 2.8), the generic 8x/12x otherwise. */
export function cacheRatios(key: string): { fresh: number; degraded: number } {
  return key === "yield-data" ? { fresh: 2, degraded: 4 } : GENERIC_RATIOS;
}

const impactOf = (s: FreshnessStatus): HealthStatus => (s === "fresh" ? "healthy" : s);

/** What the cache check found so far: caches by key, causes, and the late caches' descriptions by status. */
interface CacheFindings {
  caches: Record<string, CacheStatus>;
  causes: StatusCause[];
  late: Record<"degraded" | "stale", string[]>;
}

/**
 * Site-data caches of build `m` at `now` (Unix s; section `caches` without `fx-rates`, see fxCheck):
 * one per published site-data artifact with a route budget (`maxAgeSec`), under its spec key
 * (cacheKeyOf), except the on-chain sections' artifacts. Age = now − the file's `dataAsOf`, or, for
 * a file of unknown data time, since its producer job's last successful run (`cron-fallback`);
 * the generic 8×/12× rule on the route budget (`yield-data` 2×/4×): degraded or stale sets the
 * status (cause `cache:<key>`). Spec keys the build does not publish are listed `not-published`: an
 * optional one without effect on status, a required one stale. Warnings: late caches, stale first.
 */
export function cachesCheck(
  m: Pick<BuildManifest, "files" | "buildId">,
  now: number,
  producerOf: (key: string) => Producer,
): Check<Record<string, CacheStatus>> {
  const found: CacheFindings = { caches: {}, causes: [], late: { degraded: [], stale: [] } };
  for (const f of m.files) {
    const key = cacheKeyOf(f.artifact);
    if (
      !f.path.startsWith("site-data/") ||
      found.caches[key] ||
      f.maxAgeSec === undefined ||
      ONCHAIN_SECTION_ARTIFACTS.has(f.artifact)
    )
      continue;
    publishedCache(found, key, { ...f, maxAgeSec: f.maxAgeSec }, m.buildId, now, producerOf(key));
  }
  // Spec keys whose artifact this build does not publish: optional ones are not yet available (no
  // effect on status, listed by the not-yet-available check); a required one missing would be every reader's 503: stale.
  for (const [key, artifact] of SPEC_CACHE_KEYS) {
    if (artifact === "fx" || found.caches[key]) continue;
    found.caches[key] = unpublishedCache(key, artifact, m.buildId, producerOf(key));
    if (!artifact.optional) {
      const what = `${key} not published by this build`;
      found.causes.push(...causesOf("stale", `cache:${key}`, what));
      found.late.stale.push(what);
    }
  }
  const statusWarnings = (["stale", "degraded"] as const)
    .filter((s) => found.late[s].length)
    .map(
      (s) =>
        `caches ${s} (sets status ${s}): ${found.late[s].join("; ")}. Published data is older than ${s === "stale" ? "12× its route budget (yield-data: 4×)" : "8× its route budget (yield-data: 2×)"}: these routes answer with \`Warning: 110\` and \`Cache-Control: no-store\`${s === "stale" ? " and `X-Data-Freshness: stale`" : ""} until a newer build is published.`,
    );
  return check(found.caches, { causes: found.causes, statusWarnings });
}

/** Adds the cache of a published site-data file `f` under `key` to `found` (with its cause and late description). */
function publishedCache(
  found: CacheFindings,
  key: string,
  f: { artifact: string; dataAsOf: number | null; maxAgeSec: number },
  buildId: string,
  now: number,
  producer: Producer,
): void {
  const ratios = cacheRatios(key);
  const { lastSuccessAt, ...job } = producer;
  // A file of unknown data time: its freshness falls back to the producer job's last successful run (spec 2.8 `cron-fallback`).
  const cronFallback = f.dataAsOf == null && lastSuccessAt !== null;
  const fr = assessFreshness(now, cronFallback ? lastSuccessAt : f.dataAsOf, f.maxAgeSec, ratios);
  found.caches[key] = {
    ageSeconds: fr.ageSeconds,
    maxAge: f.maxAgeSec,
    healthy: fr.status !== "stale",
    ...job,
    endpointMaxAge: f.maxAgeSec,
    availabilityMaxAge: f.maxAgeSec * ratios.degraded,
    endpointBudgetReason: "route-budget",
    availabilityBudgetReason: `${ratios.degraded}x-route-budget`,
    freshnessSource: cronFallback ? "cron-fallback" : "freshness-sentinel",
    sentinelValidationReason: cronFallback ? "no-data-time" : null,
    buildId,
    artifact: f.artifact,
  };
  const what = `${key}${key === f.artifact ? "" : ` (${f.artifact})`} ${fr.ageSeconds === null ? "of unknown age" : `${age(fr.ageSeconds)} old`} (budget ${age(f.maxAgeSec)}${ratios === GENERIC_RATIOS ? "" : `, ${ratios.fresh}x/${ratios.degraded}x`})`;
  found.causes.push(...causesOf(impactOf(fr.status), `cache:${key}`, what));
  if (fr.status !== "fresh") found.late[fr.status].push(what);
}

/** The cache of spec key `key` whose artifact the build does not publish: no age, not healthy, `not-published`. */
function unpublishedCache(key: string, artifact: Artifact, buildId: string, producer: Producer): CacheStatus {
  const ratios = cacheRatios(key);
  return {
    ageSeconds: null,
    maxAge: artifact.maxAgeSec,
    healthy: false,
    producerJob: producer.producerJob,
    producerIntervalSec: producer.producerIntervalSec,
    endpointMaxAge: artifact.maxAgeSec,
    availabilityMaxAge: artifact.maxAgeSec * ratios.degraded,
    endpointBudgetReason: "route-budget",
    availabilityBudgetReason: `${ratios.degraded}x-route-budget`,
    freshnessSource: "freshness-sentinel",
    sentinelValidationReason: "not-published",
    buildId,
    artifact: artifact.key,
  };
}

/** `caches` in the payload's order: spec keys first, in the spec's order (SPEC_CACHE_KEYS), then the others in manifest order. */
export function orderedCaches(caches: Record<string, CacheStatus>): Record<string, CacheStatus> {
  const ordered: Record<string, CacheStatus> = {};
  for (const [key] of SPEC_CACHE_KEYS) if (caches[key]) ordered[key] = caches[key];
  for (const [key, c] of Object.entries(caches)) ordered[key] ??= c;
  return ordered;
}
