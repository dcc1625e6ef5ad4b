import type { BuildManifest } from "../../site-data/manifest.ts";
import { causesOf, check } from "./causes.ts";
import { age, isoMinute } from "./format.ts";
import type { Producer } from "./jobs.ts";
import type { CacheStatus, Check, HealthStatus } from "./types.ts";

/**
 * Cadence of the `fx-rates` cache (spec 3.2: the fx source uses its own cadence). ECB reference rates
 * appear once per TARGET working day (`maxAgeSec`). `fresh` up to 4 days (the age up to which a rate
 * is a peg reference, `fx`), `degraded` up to 8 days, `stale` beyond; `none` without any observation.
 */
export const FX_CADENCE = { maxAgeSec: 86400, freshSec: 4 * 86400, degradedSec: 8 * 86400 } as const;
/** Manifest source of the ECB reference rates. */
const FX_ENDPOINT = "frankfurter.rates";

/** `fx-rates` source status from the age (s) of the newest ECB observation (FX_CADENCE; null → `none`). */
export function fxSourceStatus(ageSeconds: number | null): "fresh" | "degraded" | "stale" | "none" {
  if (ageSeconds === null) return "none";
  return ageSeconds <= FX_CADENCE.freshSec ? "fresh" : ageSeconds <= FX_CADENCE.degradedSec ? "degraded" : "stale";
}

/**
 * The `fx-rates` cache (section: its CacheStatus): age at `now` (Unix s) of the newest ECB reference
 * rate the build observed (manifest source `frankfurter.rates`), judged on FX_CADENCE. `degraded`
 * sets status degraded, `stale` or `none` stale (cause `fx-cached-fallback`), with a warning saying
 * how non-USD supply and pegs are valued meanwhile.
 */
export function fxCheck(
  m: Pick<BuildManifest, "sources">,
  now: number,
  producer: Pick<Producer, "producerJob" | "producerIntervalSec">,
): Check<CacheStatus> {
  const fx = m.sources.find((s) => s.endpoint === FX_ENDPOINT);
  const fxAt = fx?.newestObservedAt ?? null;
  const fxAge = fxAt === null ? null : Math.max(0, Math.floor(now) - fxAt);
  const fxStatus = fxSourceStatus(fxAge);
  const fxImpact: HealthStatus = fxStatus === "fresh" ? "healthy" : fxStatus === "degraded" ? "degraded" : "stale";
  const fxWarning =
    fxStatus === "fresh"
      ? null
      : `${fxAt === null || fxAge === null ? "no ECB reference rate has been observed" : `ECB reference rates last observed ${isoMinute(fxAt)}, ${age(fxAge)} before now`} (fresh up to 4 days, degraded up to 8): non-USD fiat supply is valued with the most recent ECB rate if at most 365 days old (\`fxFallbackRates\` in /api/stablecoins), and non-USD coins are judged against the median of ≥ 3 same-peg coins where one exists, else not judged for depegs (\`referenceSource\` \`fx-fallback\` in /api/peg-summary).`;
  const cache: CacheStatus = {
    ageSeconds: fxAge,
    maxAge: FX_CADENCE.maxAgeSec,
    healthy: fxStatus === "fresh" || fxStatus === "degraded",
    producerJob: producer.producerJob,
    producerIntervalSec: producer.producerIntervalSec,
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
  return check(cache, {
    causes: causesOf(
      fxImpact,
      "fx-cached-fallback",
      fxAge === null ? "no ECB reference rate observed" : `ECB rates ${age(fxAge)} old (fx ${fxStatus})`,
    ),
    statusWarnings: fxWarning ? [`fx-rates cache ${fxStatus} (sets status ${fxImpact}): ${fxWarning}`] : [],
  });
}
