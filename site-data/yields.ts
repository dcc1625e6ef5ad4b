import { z } from "zod";
import {
  DEFAULT_SAFETY_SCORE,
  type PoolInput,
  round,
  SCALING_FACTOR,
  YIELD_VERSION,
} from "../pipelines/analytics/yield-scoring.version.ts";
import { buildTimeModule, num, requiredNum, sqlArtifact } from "./contract.ts";
import { methodology, MethodologySchema } from "./peg-summary.ts";

const BenchmarkSchema = z.object({
  key: z.string(),
  label: z.string(),
  currency: z.string(),
  rate: z.number().nullable(),
  recordDate: z.string().nullable(),
  fetchedAt: z.number().int().nullable(),
  ageSeconds: z.number().int().nullable(),
  source: z.string(),
  isFallback: z.boolean(),
  fallbackMode: z.enum(["none", "unavailable"]),
  isProxy: z.boolean(),
});

/**
 * One ranking row as published (safety-independent; the route adds `safetyScore`, `safetyGrade`,
 * `yieldToRisk` and `pharosYieldScore` at read time from the build's safety grades). APY fields percent,
 * TVL USD, `observedAt` Unix s; `sourceKey` = `defillama-yields:<poolId>` (the key of `/api/yield-history`).
 */
export const YieldRowSchema = z.object({
  id: z.string(),
  sourceKey: z.string(),
  stablecoinId: z.string(),
  symbol: z.string(),
  pegCurrency: z.string(),
  project: z.string(),
  chain: z.string(),
  poolMeta: z.string().nullable(),
  tvlUsd: z.number(),
  apy: z.number(),
  apyBase: z.number().nullable(),
  apyReward: z.number().nullable(),
  apyPct1D: z.number().nullable(),
  apyPct7D: z.number().nullable(),
  observedAt: z.number().int(),
  rewardShare: z.number(),
  benchmarkRate: z.number().nullable(),
  excessYield: z.number().nullable(),
  effectiveYield: z.number(),
  sourceRiskPenalty: z.number(),
  rowUtility: z.number(),
  sustainability: z.number(),
  sustainabilityBasis: z.enum(["apy-variance", "reward-share-and-trend"]),
});
export type YieldRow = z.infer<typeof YieldRowSchema>;

export const YieldRankingsFileSchema = z.object({
  rankings: z.array(YieldRowSchema),
  riskFreeRate: z.number().nullable(),
  benchmarks: z.record(z.string(), BenchmarkSchema),
  scalingFactor: z.number(),
  medianApy: z.number().nullable(),
  updatedAt: z.number().int(),
  provenance: z.object({
    selectionMethod: z.string(),
    benchmark: z.string(),
    benchmarks: z.array(z.string()),
    source: z.string(),
    capturedAt: z.number().int(),
  }),
  methodology: MethodologySchema,
});

/** One day of one pool's yield (`site-data/yield-history/<id>.json`): date Unix s (00:00 UTC), APY percent, TVL USD. */
export const YieldHistoryPointSchema = z.object({
  date: z.number().int(),
  sourceKey: z.string(),
  project: z.string(),
  chain: z.string(),
  apy: z.number(),
  apyBase: z.number().nullable(),
  apyReward: z.number().nullable(),
  tvlUsd: z.number(),
});
export const YieldHistoryFileSchema = z.array(YieldHistoryPointSchema);

export const YieldAdapterManifestSchema = z.object({
  adapters: z.array(
    z.object({
      key: z.string(),
      label: z.string(),
      endpoint: z.string(),
      lineageFamily: z.string(),
      kind: z.string(),
      captures: z.number().int(),
      newestCaptureAt: z.number().int().nullable(),
      pools: z.number().int(),
      singleAssetMatchedPools: z.number().int(),
      coins: z.number().int(),
      feeds: z.array(z.string()),
    }),
  ),
  methodology: MethodologySchema,
  updatedAt: z.number().int(),
});

const SOURCE = "defillama-yields";
const key = (poolId: string) => `${SOURCE}:${poolId}`;
const YIELD_LABEL = "Yield rankings v1 (single-asset pools, safety-weighted)";

function poolInput(r: Record<string, unknown>): PoolInput {
  return {
    poolId: String(r.pool_id),
    stablecoinId: String(r.stablecoin_id),
    symbol: String(r.symbol),
    pegCurrency: String(r.peg_currency),
    project: String(r.project),
    chain: String(r.chain),
    poolMeta: (r.pool_meta ?? null) as string | null,
    tvlUsd: num(r.tvl_usd) ?? 0,
    apy: requiredNum(r.apy, "yield pool apy"),
    apyBase: num(r.apy_base),
    apyReward: num(r.apy_reward),
    apyPct1D: num(r.apy_pct_1d),
    apyPct7D: num(r.apy_pct_7d),
    outlier: Boolean(r.outlier),
    observedAt: requiredNum(r.observed_at, "yield pool observed_at"),
    backing: (r.backing ?? null) as string | null,
    apySamples: JSON.parse(String(r.apy_samples_json ?? "[]")) as number[],
  };
}

/** `site-data/yield-rankings.json` — single-asset stablecoin pools with build-time yield metrics; published only when a pool capture exists. */
/** The yield-scoring analytic, loaded at build time only (the rankings' transform; the API server never loads it). */
const yieldScoring = buildTimeModule(
  "the yield-scoring analytic",
  () => import("../pipelines/analytics/yield-scoring.ts"),
);

export const yieldRankingsArtifact = sqlArtifact(import.meta.url, {
  key: "yield-rankings",
  schemaVersion: "1.0.0",
  maxAgeSec: 3600,
  description:
    "Yield rankings before safety hydration: single-asset pools matched to one coin, benchmark, effective yield, sustainability.",
  path: "site-data/yield-rankings.json",
  schema: YieldRankingsFileSchema,
  sql: "yield_ranking_pools",
  shape: "many",
  optional: true,
  // benchmarks, base yield and sustainability are the TS analytic of pipelines/analytics/yield-scoring.ts
  prepare: yieldScoring.load,
  transform: (rows: Record<string, unknown>[], ctx) => {
    const { benchmarks, baseYield } = yieldScoring.get();
    const pools = rows.map(poolInput);
    const bench = benchmarks(
      pools,
      pools.map((p) => p.pegCurrency),
      ctx.asOf,
    );
    const rankings = pools.map(
      (p): YieldRow => ({
        id: p.poolId,
        sourceKey: key(p.poolId),
        stablecoinId: p.stablecoinId,
        symbol: p.symbol,
        pegCurrency: p.pegCurrency,
        project: p.project,
        chain: p.chain,
        poolMeta: p.poolMeta,
        tvlUsd: p.tvlUsd,
        apy: p.apy,
        apyBase: p.apyBase,
        apyReward: p.apyReward,
        apyPct1D: p.apyPct1D,
        apyPct7D: p.apyPct7D,
        observedAt: p.observedAt,
        ...baseYield(p, bench),
      }),
    );
    const apys = rankings.map((r) => r.apy).sort((a, b) => a - b);
    const mid = apys.length >> 1;
    const capturedAt = Math.max(...pools.map((p) => p.observedAt));
    return {
      rankings,
      riskFreeRate: bench.USD.rate,
      benchmarks: bench,
      scalingFactor: SCALING_FACTOR,
      medianApy: apys.length % 2 ? apys[mid] : Math.round(((apys[mid - 1] + apys[mid]) / 2) * 1e4) / 1e4,
      updatedAt: capturedAt,
      provenance: {
        selectionMethod:
          "pools of the newest DefiLlama /pools capture with exactly one token, matched to one registry coin (by address, else symbol within chain), with an APY",
        benchmark: "USD",
        benchmarks: Object.keys(bench),
        source: SOURCE,
        capturedAt,
      },
      methodology: methodology(YIELD_VERSION, YIELD_LABEL, ctx.asOf),
    };
  },
  rows: (p: z.infer<typeof YieldRankingsFileSchema>) => p.rankings.length,
  // the newest pool capture
  dataAsOf: (p: z.infer<typeof YieldRankingsFileSchema>) => p.updatedAt,
});

/** `site-data/yield-history/<id>.json` — daily APY of every matched single-asset pool of one coin, oldest first. */
export const yieldHistoryArtifact = sqlArtifact(import.meta.url, {
  key: "yield-history",
  schemaVersion: "1.0.0",
  maxAgeSec: 3600,
  description: "Daily APY per matched single-asset pool of each coin, per capture day.",
  path: "site-data/yield-history/{id}.json",
  idColumn: "stablecoin_id",
  schema: YieldHistoryFileSchema,
  sql: "yield_history",
  shape: "many",
  optional: true,
  // the SQL gives the pool id as sourceKey; the key's form (`<source>:<pool>`) is declared once, here
  transform: (points: z.infer<typeof YieldHistoryPointSchema>[]) =>
    points.map((p) => ({ ...p, sourceKey: key(p.sourceKey) })),
  dataAsOf: (_points, ctx) => ctx.sourceObservedAt["defillama-yields.pools"] ?? null,
});

/** A row of yield_adapters.sql: the coverage counts of the DefiLlama yields adapter, wire names. */
type AdapterCoverage = {
  captures: number;
  newestCaptureAt: number | null;
  pools: number;
  singleAssetMatchedPools: number;
  coins: number;
};

/** `site-data/yield-adapter-manifest.json` — the yield sources the build reads and what they covered. */
export const yieldAdapterManifestArtifact = sqlArtifact(import.meta.url, {
  key: "yield-adapter-manifest",
  schemaVersion: "1.0.0",
  maxAgeSec: 3600,
  description: "Yield adapters: endpoint, lineage, captures and coverage.",
  path: "site-data/yield-adapter-manifest.json",
  schema: YieldAdapterManifestSchema,
  sql: "yield_adapters",
  shape: "one",
  // the adapter's constant facts around the counts the SQL gives, and the methodology
  transform: (c: AdapterCoverage, ctx) => ({
    adapters: [
      {
        key: SOURCE,
        label: "DefiLlama yields /pools",
        endpoint: "https://yields.llama.fi/pools",
        lineageFamily: "defillama",
        kind: "pool-snapshot",
        ...c,
        feeds: ["/api/yield-rankings", "/api/yield-history", "/api/dex-liquidity"],
      },
    ],
    methodology: methodology(YIELD_VERSION, YIELD_LABEL, ctx.asOf),
    updatedAt: ctx.asOf,
  }),
});

/**
 * Read-time fields of a ranking row (`ballast-yield-v1`, pipelines/analytics/yield-scoring.ts) given its
 * coin's safety card (none, or score null: safety 40, grade NR): `yieldToRisk` = apy / (101 − safety),
 * `pharosYieldScore` = clamp(round(rowUtility / max(0.5, (101 − safety)/20)^1.75 × sustainability × 8), 0, 100).
 */
export function hydrate(
  row: { apy: number; rowUtility: number; sustainability: number },
  card: { score: number | null; grade: string } | undefined,
) {
  const safetyScore = card?.score ?? DEFAULT_SAFETY_SCORE;
  const safetyGrade = card?.score === null || card === undefined ? "NR" : card.grade;
  const divisor = 101 - safetyScore;
  const riskPenalty = Math.max(0.5, divisor / 20);
  const yieldEfficiency = row.rowUtility / riskPenalty ** 1.75;
  return {
    safetyScore,
    safetyGrade,
    yieldToRisk: divisor > 0 ? round(row.apy / divisor, 4) : null,
    pharosYieldScore: Math.min(100, Math.max(0, Math.round(yieldEfficiency * row.sustainability * SCALING_FACTOR))),
  };
}
