import { assessFreshness, GENERIC_RATIOS } from "./lib/freshness.ts";
import type { ServingBuild } from "./lib/published.ts";

/** Features whose real inputs are not published yet; reported, never invented. */
export const NOT_YET_AVAILABLE = ["usds-status", "bluechip-ratings", "dex-liquidity", "yield-data", "dews", "blacklist", "mint-burn"];

/** FX source budget (s): ECB publishes once per working day. */
const FX_MAX_AGE_SEC = 86400;

/**
 * Health resource (spec 2.8) computed from the serving build's manifest at `now` (Unix s).
 * Caches: one per published site-data artifact plus `fx-rates`. Status: `stale` if any cache is
 * stale, `degraded` if any is degraded, a snapshot source is stale/missing or FX is on cached
 * fallback, else `healthy`. `clock` says whether the replay or wall clock is in force.
 */
export function buildHealth(build: ServingBuild | null, now: number, clock: "replay" | "wall") {
  if (!build) {
    return { status: "stale", timestamp: now, warnings: ["no published build"], caches: {}, blacklist: null, mintBurn: null, circuits: {}, telegramSummary: null, clock: { mode: clock, buildId: null, asOf: null } };
  }
  const m = build.manifest;
  const caches: Record<string, Record<string, unknown>> = {};
  const seen = new Set<string>();
  const ratios: number[] = [];
  const warnings: string[] = [];
  for (const f of m.files) {
    if (!f.path.startsWith("site-data/") || seen.has(f.artifact) || f.maxAgeSec === undefined) continue;
    seen.add(f.artifact);
    const fr = assessFreshness(now, f.dataAsOf, f.maxAgeSec, GENERIC_RATIOS);
    const ratio = fr.ageSeconds === null ? Infinity : fr.ageSeconds / f.maxAgeSec;
    ratios.push(ratio);
    caches[f.artifact] = {
      ageSeconds: fr.ageSeconds, maxAge: f.maxAgeSec, healthy: ratio <= GENERIC_RATIOS.degraded, producerJob: "build",
      producerIntervalSec: null, endpointMaxAge: f.maxAgeSec, availabilityMaxAge: f.maxAgeSec * GENERIC_RATIOS.degraded,
      endpointBudgetReason: "route-budget", availabilityBudgetReason: "12x-route-budget", freshnessSource: "freshness-sentinel",
      sentinelValidationReason: null, buildId: m.buildId,
    };
  }
  const fx = m.sources.find((s) => s.endpoint === "frankfurter.rates");
  const fxAge = fx?.newestObservedAt ? Math.max(0, now - fx.newestObservedAt) : null;
  const fxStatus = fxAge === null ? "none" : fxAge <= FX_MAX_AGE_SEC * 4 ? "fresh" : fxAge <= FX_MAX_AGE_SEC * 8 ? "degraded" : "stale";
  caches["fx-rates"] = {
    ageSeconds: fxAge, maxAge: FX_MAX_AGE_SEC, healthy: fxStatus === "fresh", producerJob: "build", producerIntervalSec: null,
    endpointMaxAge: FX_MAX_AGE_SEC, availabilityMaxAge: FX_MAX_AGE_SEC * 4, endpointBudgetReason: "ecb-working-day",
    availabilityBudgetReason: "4x-working-day", freshnessSource: "freshness-sentinel", sentinelValidationReason: null,
    mode: fxStatus === "fresh" ? "live" : "cached-fallback", sourceUpdatedAt: fx?.newestObservedAt ?? null, sourceAgeSeconds: fxAge,
    sourceStatus: fxStatus, warning: fxStatus === "fresh" ? null : "FX reference rates are older than their budget; non-USD conversions use the last published rate",
    consecutiveFallbackRuns: null,
  };
  let status: "healthy" | "degraded" | "stale" = "healthy";
  if (ratios.some((r) => r > GENERIC_RATIOS.degraded)) status = "stale";
  else if (ratios.some((r) => r > GENERIC_RATIOS.fresh)) status = "degraded";
  if (status === "healthy" && fxStatus !== "fresh") { status = "degraded"; }
  if (fxStatus !== "fresh") warnings.push("fx-rates: cached fallback");
  for (const s of m.sources) {
    const dropped = Object.values(s.dropped).reduce((a, b) => a + b, 0);
    if (s.status !== "ok") warnings.push(`source ${s.endpoint}: ${s.status}`);
    if (dropped > 0) warnings.push(`source ${s.endpoint}: ${dropped} malformed upstream values dropped`);
  }
  if (m.sources.find((s) => s.endpoint === "defillama.stablecoins")?.status !== "ok" && status === "healthy") status = "degraded";
  for (const [analytic, reasons] of Object.entries(m.qualityRejections ?? {})) {
    warnings.push(`${analytic}: rejected ${Object.entries(reasons).map(([r, n]) => `${n} ${r}`).join(", ")}`);
  }
  warnings.push(`not yet available: ${NOT_YET_AVAILABLE.join(", ")}`);
  return {
    status,
    timestamp: now,
    warnings,
    caches,
    blacklist: null,
    mintBurn: null,
    circuits: Object.fromEntries(Object.entries(m.circuits).map(([k, v]) => [k, v])),
    telegramSummary: null,
    clock: { mode: clock, buildId: m.buildId, asOf: m.asOf },
  };
}
