import { z } from "zod";
import {
  COMPONENT_WEIGHTS,
  EFFECTIVE_EXIT_WEIGHTS,
  REDEMPTION_BACKSTOP_VERSION,
  ROUTE_FAMILY_CAPS,
  SEVERE_DEPEG_BPS,
} from "../pipelines/analytics/redemption-backstops.version.ts";
import { changelogPathOf } from "../pipelines/analytics/changelogs.ts";
import {
  AccessModelSchema,
  ExecutionModelSchema,
  FeeModelKindSchema,
  HolderEligibilitySchema,
  OutputAssetTypeSchema,
  RouteFamilySchema,
  SettlementModelSchema,
} from "../pipelines/registry/schema.ts";
import { sqlArtifact } from "./contract.ts";

const Score = z.number().int().min(0).max(100);

/**
 * One redemption backstop entry (spec 2.12; `ballast-redemption-backstop-v1`). Scores 0-100 (null when not
 * computable), USD, bps, Unix s. Beyond the spec fields: `executionModel`, `capacityScore`,
 * `minimumRedeemUsd`, `holderEligibility` (the curated inputs of the score) and `impairedReason` (why a
 * severe open depeg set `resolutionState` `failed`; null otherwise).
 */
export const RedemptionBackstopEntrySchema = z.object({
  stablecoinId: z.string(),
  score: Score.nullable(),
  effectiveExitScore: Score.nullable(),
  dexLiquidityScore: Score.nullable(),
  routeFamily: RouteFamilySchema,
  accessModel: AccessModelSchema,
  settlementModel: SettlementModelSchema,
  executionModel: ExecutionModelSchema,
  outputAssetType: OutputAssetTypeSchema,
  sourceMode: z.enum(["dynamic", "estimated", "static"]),
  resolutionState: z.enum(["resolved", "missing-cache", "missing-capacity", "failed"]),
  capacityConfidence: z.enum(["live-direct", "live-proxy", "documented-bound", "heuristic"]),
  capacityBasis: z.string(),
  capacitySemantics: z.enum(["immediate-bounded", "eventual-only"]),
  feeConfidence: z.enum(["fixed", "formula", "undisclosed-reviewed"]),
  feeModelKind: FeeModelKindSchema,
  modelConfidence: z.enum(["high", "medium", "low"]),
  immediateCapacityUsd: z.number().nonnegative().nullable(),
  immediateCapacityRatio: z.number().min(0).max(1).nullable(),
  capacityScore: Score.nullable(),
  feeBps: z.number().nonnegative().nullable(),
  feeDescription: z.string(),
  queueEnabled: z.boolean(),
  minimumRedeemUsd: z.number().nonnegative().nullable(),
  holderEligibility: HolderEligibilitySchema,
  docs: z.array(z.string()),
  notes: z.string(),
  capsApplied: z.array(z.enum(["queue-route-cap", "offchain-route-cap", "config-cap"])),
  impairedReason: z.string().nullable(),
  updatedAt: z.number().int(),
  methodologyVersion: z.string(),
});
export type RedemptionBackstopEntry = z.infer<typeof RedemptionBackstopEntrySchema>;

/** `/api/redemption-backstops` (spec 2.12): entries by stablecoin id, methodology, as-of. */
export const RedemptionBackstopsPayloadSchema = z.object({
  coins: z.record(z.string(), RedemptionBackstopEntrySchema),
  methodology: z.object({
    version: z.string(),
    changelogPath: z.string(),
    componentWeights: z.object({
      access: z.number(),
      settlement: z.number(),
      executionCertainty: z.number(),
      capacity: z.number(),
      outputAssetQuality: z.number(),
      cost: z.number(),
    }),
    effectiveExitWeights: z.object({ liquidity: z.number(), redemption: z.number(), secondaryBonus: z.number() }),
    routeFamilyCaps: z.record(z.string(), z.object({ max: z.number(), cap: z.string() })),
    severeDepegBps: z.number(),
  }),
  updatedAt: z.number().int(),
});

/** `site-data/redemption-backstops.json` — one backstop entry per coin with curated redemption facts. */
export const redemptionBackstopsArtifact = sqlArtifact(import.meta.url, {
  key: "redemption-backstops",
  schemaVersion: "1.0.0",
  maxAgeSec: 1800,
  description:
    "Redemption backstop entries (route score, capacity, fee, effective exit) per coin with curated redemption facts.",
  path: "site-data/redemption-backstops.json",
  schema: RedemptionBackstopsPayloadSchema,
  sql: "redemption_backstops",
  shape: "many",
  // entries keyed by coin (the mart stores each as a JSON document) and the methodology constants
  transform: (rows: { stablecoin_id: string; entry_json: string }[], ctx) => ({
    coins: Object.fromEntries(rows.map((r) => [r.stablecoin_id, JSON.parse(r.entry_json)])),
    methodology: {
      version: REDEMPTION_BACKSTOP_VERSION,
      changelogPath: changelogPathOf(REDEMPTION_BACKSTOP_VERSION),
      componentWeights: { ...COMPONENT_WEIGHTS },
      effectiveExitWeights: { ...EFFECTIVE_EXIT_WEIGHTS },
      routeFamilyCaps: { ...ROUTE_FAMILY_CAPS },
      severeDepegBps: SEVERE_DEPEG_BPS,
    },
    updatedAt: ctx.asOf,
  }),
});
