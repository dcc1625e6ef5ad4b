import { z } from "zod";
import { changelogPathOf } from "../pipelines/analytics/changelogs.ts";
import {
  ACTIVITY_COVERAGE_FLOOR,
  DEX_LIQUIDITY_LABEL,
  DEX_LIQUIDITY_VERSION,
  DEX_WEIGHTS,
  MIN_POOL_TVL_USD,
  TOP_POOLS,
} from "../pipelines/analytics/dex-liquidity.version.ts";
import { mapObject, sqlArtifact } from "./contract.ts";

/** Spec 2.17: why a DEX liquidity row has no score (null when rated). v1 emits only `no-retained-pools`. */
export const DEX_UNAVAILABLE_REASONS = [
  "activity-coverage-below-floor",
  "activity-missing",
  "activity-stale",
  "activity-completeness-unknown",
  "no-retained-pools",
  "invalid-coverage-evidence",
] as const;
/** Volume evidence behind a rated row: `observed` (volumes cover ≥ 50% of retained TVL), else why activity was left out. */
export const DEX_ACTIVITY_STATUSES = ["observed", "activity-missing", "activity-coverage-below-floor"] as const;
export const POOL_UNMATCHED_REASONS = [
  "ambiguous-symbol",
  "unknown-symbol",
  "not-on-chain",
  "no-stablecoin-token",
] as const;

const Share = z.number().min(0).max(1).nullable();

export const DexTopPoolSchema = z.object({
  poolId: z.string(),
  project: z.string(),
  chain: z.string(),
  symbol: z.string(),
  /** TVL attributed to the coin (pool TVL ÷ its token count), USD. */
  tvlUsd: z.number().nonnegative(),
  share: Share,
  /** Pool APY, percent; null when DefiLlama has none. */
  apy: z.number().nullable(),
  poolMeta: z.string().nullable(),
  /** 24 h volume attributed to the coin, USD; null when the pool reports none (never 0 for unknown). */
  volume24hUsd: z.number().nonnegative().nullable(),
});
const ChainShare = z.object({
  chain: z.string(),
  tvlUsd: z.number().nonnegative(),
  share: Share,
  poolCount: z.number().int().nonnegative(),
});
const ProtocolShare = z.object({
  protocol: z.string(),
  tvlUsd: z.number().nonnegative(),
  share: Share,
  poolCount: z.number().int().nonnegative(),
});

/** One coin of `/api/dex-liquidity` (spec 2.17 DEX liquidity row). */
export const DexLiquidityRowSchema = z.object({
  stablecoinId: z.string(),
  symbol: z.string(),
  /** 0-100 (`ballast-dex-liquidity-v1`); null when not rated (see liquidityScoreUnavailableReason). */
  liquidityScore: z.number().int().min(0).max(100).nullable(),
  components: z
    .object({
      depth: z.number(),
      activity: z.number().nullable(),
      concentration: z.number(),
      spread: z.number(),
      poolCount: z.number(),
    })
    .nullable(),
  totalTvlUsd: z.number().nonnegative(),
  poolCount: z.number().int().nonnegative(),
  protocolCount: z.number().int().nonnegative(),
  chainCount: z.number().int().nonnegative(),
  /** Herfindahl-Hirschman index of retained pool TVL, 0-1; null without pools. */
  hhi: z.number().min(0).max(1).nullable(),
  totalVolume24hUsd: z.number().nonnegative().nullable(),
  totalVolume7dUsd: z.number().nonnegative().nullable(),
  /** Share of retained TVL in pools reporting a 24 h volume (0-1); null without pools. */
  volumeCoverageShare: Share,
  activityStatus: z.enum(DEX_ACTIVITY_STATUSES).nullable(),
  liquidityScoreUnavailableReason: z.enum(DEX_UNAVAILABLE_REASONS).nullable(),
  warning: z.string().nullable(),
  topPools: z.array(DexTopPoolSchema),
  chains: z.array(ChainShare),
  protocols: z.array(ProtocolShare),
  observedAt: z.number().int(),
  methodologyVersion: z.string(),
});

/** A stablecoin-flagged pool token no coin was matched to, with the reason and the candidate ids (never guessed). */
export const DexUnmatchedSchema = z.object({
  poolId: z.string(),
  tokenIndex: z.number().int().nonnegative(),
  token: z.string(),
  chain: z.string(),
  project: z.string(),
  symbol: z.string(),
  tvlUsd: z.number().nonnegative(),
  matchMethod: z.enum(["address", "symbol-chain"]),
  reason: z.enum(POOL_UNMATCHED_REASONS),
  candidates: z.array(z.string()),
});

export const DexLiquiditySchema = z.object({
  coins: z.array(DexLiquidityRowSchema),
  unmatched: z.array(DexUnmatchedSchema),
  quality: z.object({
    source: z.string(),
    poolUniverse: z.string(),
    poolsTotal: z.number().int().nonnegative(),
    stablecoinPools: z.number().int().nonnegative(),
    poolsMatched: z.number().int().nonnegative(),
    tokensTotal: z.number().int().nonnegative(),
    tokensMatched: z.number().int().nonnegative(),
    poolsWithAddresses: z.number().int().nonnegative(),
    poolsWithVolume: z.number().int().nonnegative(),
    unmatchedByReason: z.record(z.string(), z.number().int().nonnegative()),
    ratedCoins: z.number().int().nonnegative(),
    observedAt: z.number().int(),
  }),
  methodology: z.object({
    version: z.string(),
    label: z.string(),
    changelogPath: z.string(),
    weights: z.object({
      depth: z.number(),
      activity: z.number(),
      concentration: z.number(),
      spread: z.number(),
      poolCount: z.number(),
    }),
    minPoolTvlUsd: z.number(),
    activityCoverageFloor: z.number(),
    topPools: z.number().int(),
  }),
  updatedAt: z.number().int(),
});
export type DexLiquidity = z.infer<typeof DexLiquiditySchema>;

export const DexLiquidityHistoryRowSchema = z.object({
  /** UTC day of the pool capture (Unix s, 00:00). */
  date: z.number().int(),
  liquidityScore: z.number().int().min(0).max(100).nullable(),
  totalTvlUsd: z.number().nonnegative(),
  poolCount: z.number().int().nonnegative(),
  hhi: z.number().min(0).max(1).nullable(),
  totalVolume24hUsd: z.number().nonnegative().nullable(),
  activityStatus: z.enum(DEX_ACTIVITY_STATUSES).nullable(),
  liquidityScoreUnavailableReason: z.enum(DEX_UNAVAILABLE_REASONS).nullable(),
  observedAt: z.number().int(),
  methodologyVersion: z.string(),
});
export const DexLiquidityHistorySchema = z.array(DexLiquidityHistoryRowSchema);

type DexCoin = z.infer<typeof DexLiquidityRowSchema>;

/** The row of dex_liquidity.sql: coins (top pools and breakdowns as JSON text), unmatched tokens, quality (unmatchedByReason as MAP entries). */
type DexLiquidityRow = {
  coins: (Omit<DexCoin, "topPools" | "chains" | "protocols"> & {
    topPools: string;
    chains: string;
    protocols: string;
  })[];
  unmatched: DexLiquidity["unmatched"];
  quality: Omit<DexLiquidity["quality"], "unmatchedByReason"> & { unmatchedByReason: { key: string; value: number }[] };
};

/**
 * `site-data/dex-liquidity.json` (`{coins, unmatched, quality, methodology, updatedAt}`) — DEX liquidity
 * scores (`ballast-dex-liquidity-v1`, table `dex_liquidity`) over DefiLlama yields `/pools` captures.
 * Optional: without a pool capture at or before as-of (the default build as of 2025-09-07: the recorded
 * sample was observed 2026-09-02) nothing is published and the routes answer 503 `Data not yet
 * available: dex-liquidity`. `updatedAt` / `observedAt` are the pool capture's observation (Unix s).
 */
export const dexLiquidityArtifact = sqlArtifact(import.meta.url, {
  key: "dex-liquidity",
  schemaVersion: "1.0.0",
  maxAgeSec: 7200,
  optional: true,
  description:
    "DEX liquidity scores per coin with top pools, chain/protocol breakdowns, unmatched pool tokens and quality metadata.",
  path: "site-data/dex-liquidity.json",
  schema: DexLiquiditySchema,
  sql: "dex_liquidity",
  shape: "one",
  // top pools and breakdowns are JSON documents in the mart; the methodology is the version module's
  transform: ({ coins, unmatched, quality }: DexLiquidityRow): DexLiquidity => ({
    coins: coins.map((c) => ({
      ...c,
      topPools: JSON.parse(c.topPools),
      chains: JSON.parse(c.chains),
      protocols: JSON.parse(c.protocols),
    })),
    unmatched,
    quality: { ...quality, unmatchedByReason: mapObject(quality.unmatchedByReason) },
    methodology: {
      version: DEX_LIQUIDITY_VERSION,
      label: DEX_LIQUIDITY_LABEL,
      changelogPath: changelogPathOf(DEX_LIQUIDITY_VERSION),
      weights: { ...DEX_WEIGHTS },
      minPoolTvlUsd: MIN_POOL_TVL_USD,
      activityCoverageFloor: ACTIVITY_COVERAGE_FLOOR,
      topPools: TOP_POOLS,
    },
    updatedAt: quality.observedAt,
  }),
  rows: (payload: DexLiquidity) => payload.coins.length,
  dataAsOf: (payload: DexLiquidity) => payload.updatedAt,
});

/**
 * `site-data/dex-liquidity-history/{id}.json` — one row per capture day per coin of the DEX liquidity
 * universe, oldest first (table `dex_liquidity_daily`). Optional like `dex-liquidity`: nothing without a
 * pool capture at or before as-of.
 */
export const dexLiquidityHistoryArtifact = sqlArtifact(import.meta.url, {
  key: "dex-liquidity-history",
  schemaVersion: "1.0.0",
  maxAgeSec: 86_400,
  description: "DEX liquidity score history per coin: one row per pool capture day.",
  path: "site-data/dex-liquidity-history/{id}.json",
  idColumn: "stablecoin_id",
  schema: DexLiquidityHistorySchema,
  sql: "dex_liquidity_daily",
  shape: "many",
  optional: true,
  // the newest capture time of any row
  dataAsOf: (files: z.infer<typeof DexLiquidityHistorySchema>[]) =>
    Math.max(...files.flatMap((rows) => rows.map((r) => r.observedAt))),
});
