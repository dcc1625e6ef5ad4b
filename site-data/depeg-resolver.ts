import { z } from "zod";
import { sqlArtifact } from "./contract.ts";

const Components = z.object({
  input_coverage: z.number(),
  resolution_signal: z.number(),
  duration_support: z.number(),
  observation_maturity: z.number(),
});

/** One depeg duration resolver row (spec 2.7, states of spec 3.1). Times Unix s, durations s. */
export const DepegResolverRowSchema = z.object({
  incidentKey: z.string(),
  eventId: z.number().int(),
  stablecoinId: z.string(),
  symbol: z.string(),
  state: z.enum([
    "pending_lock",
    "lock_deferred",
    "publication_retry_pending",
    "frozen",
    "closed_pre_lock",
    "no_call",
    "invalidated",
  ]),
  startedAt: z.number().int(),
  depthStratum: z.enum(["minor", "moderate", "severe", "catastrophic"]),
  lockTrigger: z.enum(["forecast_readiness", "readiness_backstop", "scheduled_24h"]).nullable(),
  lockedAt: z.number().int().nullable(),
  lockTimingSec: z.number().int().nullable(),
  verdict: z.enum(["recovery_likely", "at_risk", "recovery_unlikely", "insufficient_signal"]).nullable(),
  predictedDurationSec: z.number().int().nullable(),
  recoveryLikelihood: z.number().min(0).max(1).nullable(),
  missingInputs: z.array(z.string()),
  readiness: z.object({
    version: z.literal("readiness-72h-v1"),
    score: z.number(),
    threshold: z.number(),
    strictEarlyLockReady: z.boolean(),
    reasons: z.array(z.string()),
    components: Components,
  }),
  backstop: z.object({
    version: z.string(),
    delaySec: z.number().int(),
    backstopAt: z.number().int(),
    reached: z.boolean(),
  }),
  deferralReason: z.string().nullable(),
  deferralCount: z.number().int(),
  policyVersion: z.string(),
  liveOverlay: z.object({
    active: z.boolean(),
    endedAt: z.number().int().nullable(),
    closeReason: z.string().nullable(),
    peakDeviationBps: z.number().int(),
    currentDeviationBps: z.number().int().nullable(),
    observedDurationSec: z.number().int(),
  }),
});
export const DepegResolverPayloadSchema = z.object({ rows: z.array(DepegResolverRowSchema) });

const Outcome = z.object({
  incidentKey: z.string(),
  stablecoinId: z.string(),
  symbol: z.string(),
  verdict: z.string().nullable(),
  lockTrigger: z.string().nullable(),
  recoveryLikelihood: z.number().nullable(),
  recovered: z.boolean(),
  predictedDurationSec: z.number().int().nullable(),
  observedDurationSec: z.number().int(),
  durationErrorSec: z.number().int().nullable(),
});
/** Review of sealed predictions against outcomes (accuracy, Brier score, duration error in s). */
export const DepegResolverReviewPayloadSchema = z.object({
  summary: z.object({
    reviewedCount: z.number().int(),
    recoveryLikelihoodAccuracy: z.number().nullable(),
    recoveryLikelihoodBrier: z.number().nullable(),
    meanAbsDurationErrorSec: z.number().int().nullable(),
    medianDurationErrorSec: z.number().int().nullable(),
    resolvedBeforePrediction: z.number().int(),
    noCall: z.number().int(),
    awaitingOutcome: z.number().int(),
  }),
  outcomes: z.array(Outcome),
});
type DepegResolverReview = z.infer<typeof DepegResolverReviewPayloadSchema>;

/** `site-data/depeg-resolver.json` — resolver rows computed by pipelines/analytics/depeg-resolver.ts. */
export const depegResolverArtifact = sqlArtifact(import.meta.url, {
  key: "depeg-resolver",
  schemaVersion: "1.0.0",
  maxAgeSec: 900,
  description: "Depeg duration resolver rows (readiness-72h-v1).",
  path: "site-data/depeg-resolver.json",
  schema: DepegResolverPayloadSchema,
  sql: "depeg_resolver_rows",
  shape: "many",
  // the mart stores each row as a JSON document
  transform: (rows: { row_json: string }[]) => ({ rows: rows.map((r) => JSON.parse(r.row_json)) }),
  dataAsOf: (_payload, ctx) => ctx.sourceObservedAt["defillama.stablecoins"] ?? null,
});

/** `site-data/depeg-resolver-review.json` — sealed predictions reviewed against outcomes. */
export const depegResolverReviewArtifact = sqlArtifact(import.meta.url, {
  key: "depeg-resolver-review",
  schemaVersion: "1.0.0",
  maxAgeSec: 900,
  description: "Review of resolver predictions against later outcomes.",
  path: "site-data/depeg-resolver-review.json",
  schema: DepegResolverReviewPayloadSchema,
  sql: "depeg_resolver_review",
  shape: "many",
  // the mart stores the review as one JSON document (none yet: no summary, no outcome)
  transform: (rows: { review_json: string }[]) =>
    JSON.parse(rows[0]?.review_json ?? '{"summary":null,"outcomes":[]}') as DepegResolverReview,
  rows: (review: DepegResolverReview) => review.outcomes.length,
  dataAsOf: (_payload, ctx) => ctx.sourceObservedAt["defillama.stablecoins"] ?? null,
});
