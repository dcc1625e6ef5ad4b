import { CACHE_PROFILES, type CacheProfile } from "../../site-data/cache-profiles.ts";

export { CACHE_PROFILES, type CacheProfile } from "../../site-data/cache-profiles.ts";

/** Freshness status from age/maxAge ratio: fresh ≤ freshRatio, degraded ≤ degradedRatio, else stale. */
export type FreshnessStatus = "fresh" | "degraded" | "stale";

/** Ratios of the generic rule (8x/12x) and the chains route (1x/2x), spec 3.2. */
export const GENERIC_RATIOS = { fresh: 8, degraded: 12 } as const;
export const CHAINS_RATIOS = { fresh: 1, degraded: 2 } as const;

/** Assessment of one payload at `nowSec`; ages in seconds. */
export interface Freshness {
  updatedAt: number | null;
  ageSeconds: number | null;
  status: FreshnessStatus;
  freshBudgetSec: number;
  degradedBudgetSec: number;
  maxAgeSec: number;
}

/** Age and status of data observed at `updatedAt` (Unix s) with budget `maxAgeSec`. Unknown time → stale. */
export function assessFreshness(
  nowSec: number,
  updatedAt: number | null,
  maxAgeSec: number,
  ratios: { fresh: number; degraded: number } = GENERIC_RATIOS,
): Freshness {
  const freshBudgetSec = maxAgeSec * ratios.fresh;
  const degradedBudgetSec = maxAgeSec * ratios.degraded;
  if (updatedAt === null)
    return { updatedAt, ageSeconds: null, status: "stale", freshBudgetSec, degradedBudgetSec, maxAgeSec };
  const ageSeconds = Math.max(0, Math.floor(nowSec) - Math.floor(updatedAt));
  const status = ageSeconds <= freshBudgetSec ? "fresh" : ageSeconds <= degradedBudgetSec ? "degraded" : "stale";
  return { updatedAt, ageSeconds, status, freshBudgetSec, degradedBudgetSec, maxAgeSec };
}

/**
 * Response headers for a cache-backed route (spec 8): `X-Data-Age`, `X-Data-Updated-At`, and past
 * the fresh runway `Warning: 110` with `Cache-Control: no-store`; else the route's profile.
 */
export function freshnessHeaders(f: Freshness, profile: CacheProfile): Record<string, string> {
  const h: Record<string, string> = {};
  if (f.ageSeconds === null) {
    h["X-Data-Age"] = "unavailable";
    h["X-Data-Updated-At"] = "unknown";
    h["X-Data-Freshness"] = "unknown";
    h["X-Data-Freshness-Reason"] = "producer-history-missing";
    h["Cache-Control"] = "no-store";
    return h;
  }
  h["X-Data-Age"] = String(f.ageSeconds);
  h["X-Data-Updated-At"] = String(f.updatedAt);
  if (f.status !== "fresh") {
    h.Warning = `110 - "Response is stale (${f.ageSeconds}s old, max ${f.maxAgeSec}s)"`;
    h["Cache-Control"] = "no-store";
    if (f.status === "stale") h["X-Data-Freshness"] = "stale";
  } else {
    h["Cache-Control"] = CACHE_PROFILES[profile];
  }
  return h;
}

/** Body `_meta` block (spec 2.17). */
export function metaBlock(f: Freshness) {
  return {
    updatedAt: f.updatedAt,
    ageSeconds: f.ageSeconds,
    status: f.status,
    freshBudgetSec: f.freshBudgetSec,
    degradedBudgetSec: f.degradedBudgetSec,
  };
}
