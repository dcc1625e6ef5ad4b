import { z } from "zod";
import { sqlArtifact } from "./contract.ts";
import { MethodologySchema } from "./peg-summary.ts";

/**
 * Contracts of the depeg query routes. The build publishes each ledger whole, pre-sorted in the
 * routes' keyset order (`site-data/depeg-events.json`: incidents, pending incidents and the
 * registry's coin ids; `site-data/events.json`: the tape); the API filters and pages them in
 * memory (api/queries/), so the serving process needs no database engine.
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
  /**
   * How the incident was confirmed: `none` (opened at once), `second-category` (a second independent
   * evidence label), `two-point-daily` (a second daily point 12-36 h later), `dependency` (a confirmed
   * incident of a curated upstream dependency at the same time; `confirmationSources` names it as
   * `dependency:<id>`).
   */
  confirmationPolicy: z.enum(["none", "second-category", "two-point-daily", "dependency"]),
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
  closeReason: z
    .enum([
      "recovered-primary",
      "recovered-dex",
      "recovered-native",
      "coverage-lost-supply",
      "superseded-direction",
      "orphan-tracking-removed",
    ])
    .nullable(),
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

/**
 * Every tape event type (`<class>.<what>`; pipelines/models/marts/tape_events.sql): depeg incident start,
 * recovery and close; issuer freeze events (spec 4.2 `eventType`); safety grade first rating, loss of
 * rating, upgrade and downgrade. The `type` filter of `/api/events` is validated against this list.
 */
export const TAPE_EVENT_TYPES = [
  "depeg.started",
  "depeg.recovered",
  "depeg.closed",
  "freeze.blacklist",
  "freeze.unblacklist",
  "freeze.destroy",
  "score.rated",
  "score.unrated",
  "score.upgrade",
  "score.downgrade",
] as const;
/** Event classes of the tape (the part of a type before its dot). */
export const TAPE_EVENT_CLASSES = ["depeg", "freeze", "score"] as const;

/** One tape event (`/api/events`): typed (TAPE_EVENT_TYPES), class, time (Unix s). */
export const TapeEventSchema = z.object({
  id: z.string(),
  type: z.enum(TAPE_EVENT_TYPES),
  class: z.enum(TAPE_EVENT_CLASSES),
  ts: z.number().int(),
  stablecoinId: z.string(),
  symbol: z.string(),
  pegCurrency: z.string(),
  chain: z.string().nullable(),
  severity: z.enum(["info", "warning", "critical"]),
  title: z.string(),
  data: z.object({ deviationBps: z.number().int().nullable(), depegEventId: z.number().int().nullable() }),
});
export type TapeEvent = z.infer<typeof TapeEventSchema>;
export const TapeEventsResponseSchema = z.object({
  events: z.array(TapeEventSchema),
  total: z.number().int().nullable(),
  totalExact: z.boolean(),
  nextCursor: z.string().nullable(),
});

/** `site-data/depeg-events.json`: every incident (`startedAt` desc, `id` desc), pending incidents, registry coin ids. */
export const DepegLedgerSchema = z.object({
  events: z.array(DepegEventSchema),
  pending: z.array(DepegPendingSchema),
  stablecoinIds: z.array(z.string()),
});
export type DepegLedger = z.infer<typeof DepegLedgerSchema>;

/** `site-data/events.json`: the whole tape, `ts` desc then `id` desc (string order). */
export const TapeLedgerSchema = z.object({ events: z.array(TapeEventSchema) });
export type TapeLedger = z.infer<typeof TapeLedgerSchema>;

/** A row of depeg_ledger.sql: the ledger with each incident's provenance as its JSON text (null: none). */
type DepegLedgerRow = Omit<DepegLedger, "events"> & {
  events: (Omit<DepegEvent, "provenance"> & { provenance: string | null })[];
};

/** Newest DefiLlama list capture (Unix s): the data time of the depeg ledgers. */
const listObservedAt = (ctx: { sourceObservedAt: Record<string, number | null> }) =>
  ctx.sourceObservedAt["defillama.stablecoins"] ?? null;

/** Depeg incidents of the `depeg_events` mart with the pending ones and the coin ids `/api/depeg-events` accepts. */
export const depegLedgerArtifact = sqlArtifact(import.meta.url, {
  key: "depeg-events",
  schemaVersion: "1.0.0",
  maxAgeSec: 900,
  description: "Depeg incidents and pending incidents, in the keyset order of /api/depeg-events.",
  path: "site-data/depeg-events.json",
  schema: DepegLedgerSchema,
  sql: "depeg_ledger",
  shape: "one",
  // each incident's provenance is a JSON document in the mart
  transform: (ledger: DepegLedgerRow): DepegLedger => ({
    ...ledger,
    events: ledger.events.map((e) => ({ ...e, provenance: e.provenance === null ? null : JSON.parse(e.provenance) })),
  }),
  rows: (ledger: DepegLedger) => ledger.events.length,
  dataAsOf: (_ledger, ctx) => listObservedAt(ctx),
});

/** The `tape_events` mart, in the keyset order of `/api/events`. */
export const tapeLedgerArtifact = sqlArtifact(import.meta.url, {
  key: "events",
  schemaVersion: "1.0.0",
  maxAgeSec: 600,
  description: "Typed events tape, in the keyset order of /api/events.",
  path: "site-data/events.json",
  schema: TapeLedgerSchema,
  sql: "tape_ledger",
  shape: "many",
  transform: (events: TapeEvent[]): TapeLedger => ({ events }),
  dataAsOf: (_payload, ctx) => listObservedAt(ctx),
});
