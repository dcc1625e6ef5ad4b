import { z } from "zod";
import { MethodologySchema } from "./peg-summary.ts";

/**
 * Contracts of the depeg query routes (served by read-only DuckDB queries over the published
 * `depeg_events`, `depeg_pending` and `tape_events` tables; see api/queries/).
 */

/** Provenance of a depeg incident (spec 2.6). */
export const DepegProvenanceSchema = z.object({
  sourceKind: z.enum(["live", "backfill"]),
  replayRunId: z.string().nullable(),
  replayVersion: z.string(),
  sourcePriceProviders: z.array(z.string()),
  quoteMode: z.string(),
  pegReferenceSource: z.string(),
  supplySource: z.string(),
  confirmationPolicy: z.enum(["none", "second-category", "two-point-daily"]),
  confirmationPointCount: z.number().int(),
  confidenceTier: z.enum(["high", "low"]),
  auditVerdict: z.string().nullable(),
  pegScoreEligible: z.boolean(),
  updatedAt: z.number().int(),
});

/** DepegEvent (spec 2.6): one linked incident. bps signed (negative below peg); times Unix s; prices USD. */
export const DepegEventSchema = z.object({
  id: z.number().int(),
  stablecoinId: z.string(),
  symbol: z.string(),
  pegType: z.string(),
  direction: z.enum(["above", "below"]),
  peakDeviationBps: z.number().int(),
  startedAt: z.number().int(),
  endedAt: z.number().int().nullable(),
  startPrice: z.number(),
  peakPrice: z.number().nullable(),
  recoveryPrice: z.number().nullable(),
  pegReference: z.number(),
  source: z.enum(["live", "backfill"]),
  confirmationSources: z.string().nullable(),
  pendingReason: z.string().nullable(),
  closeReason: z.enum(["recovered-primary", "recovered-dex", "recovered-native", "coverage-lost-supply", "superseded-direction", "orphan-tracking-removed"]).nullable(),
  constituentEventCount: z.number().int(),
  provenance: DepegProvenanceSchema.nullable(),
});
export type DepegEvent = z.infer<typeof DepegEventSchema>;

/** DepegPendingIncident (spec 2.6), returned with `includePending=true`. */
export const DepegPendingSchema = z.object({
  stablecoinId: z.string(),
  symbol: z.string(),
  direction: z.enum(["above", "below"]),
  firstSeenAt: z.number().int(),
  lastSeenAt: z.number().int(),
  firstSeenBps: z.number().int(),
  lastSeenBps: z.number().int(),
  peakSeenBps: z.number().int(),
  reason: z.string(),
  ageSec: z.number().int(),
  expiresAt: z.number().int(),
  availableConfirmationCategories: z.array(z.string()),
  missingConfirmationCategories: z.array(z.string()),
});

/** `/api/depeg-events` body. `total` is exact when `totalExact`, else the count seen so far (offset + page). */
export const DepegEventsResponseSchema = z.object({
  events: z.array(DepegEventSchema),
  pending: z.array(DepegPendingSchema).optional(),
  total: z.number().int(),
  totalExact: z.boolean(),
  counts: z.object({ incidents: z.number().int(), thresholdCrossings: z.number().int() }).optional(),
  nextCursor: z.string().nullable(),
  methodology: MethodologySchema,
});

/** One tape event (`/api/events`): typed (`depeg.started`, `depeg.recovered`, `depeg.closed`), class, time (Unix s). */
export const TapeEventSchema = z.object({
  id: z.string(),
  type: z.string(),
  class: z.enum(["depeg", "freeze", "score"]),
  ts: z.number().int(),
  stablecoinId: z.string(),
  symbol: z.string(),
  pegCurrency: z.string(),
  chain: z.string().nullable(),
  severity: z.enum(["info", "warning", "critical"]),
  title: z.string(),
  data: z.object({ deviationBps: z.number().int().nullable(), depegEventId: z.number().int().nullable() }),
});
export const TapeEventsResponseSchema = z.object({
  events: z.array(TapeEventSchema),
  total: z.number().int().nullable(),
  totalExact: z.boolean(),
  nextCursor: z.string().nullable(),
});
