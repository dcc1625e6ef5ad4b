import { z } from "zod";
import { CHAIN_HEALTH_METHODOLOGY_VERSION } from "../pipelines/analytics/chain-health.version.ts";
import { type Artifact, type ArtifactFile, num, outputPath, requiredNum, sqlFile } from "./contract.ts";

/**
 * Methodology of the chain health scores (mart `chain_health`, `pipelines/models/marts/chain_health.sql`;
 * changelog `/methodology/chain-health.md`).
 */
export { CHAIN_HEALTH_METHODOLOGY_VERSION };

/** Health bands, best first: robust ≥ 80, healthy ≥ 60, mixed ≥ 40, fragile ≥ 20, concentrated < 20. */
export const CHAIN_HEALTH_BANDS = ["robust", "healthy", "mixed", "fragile", "concentrated"] as const;

/**
 * Components of the health score, 0-100 (2 dp): `quality` (supply-weighted safety score over rated supply;
 * null when rated supply is under 50% of the chain's), `chainEnvironment` (curated chain tier: ethereum 100,
 * stage1-l2 66, mature-alt-l1 45, established-alt-l1 20, unproven 0; 50 when the chain has no curated tier),
 * `concentration` (round(100 × (1 − HHI)) of coin supply shares), `pegStability` (supply-weighted
 * max(0, 100 − |current deviation bps| / 5); 50 for a coin without a judged current price),
 * `backingDiversity` (normalised Shannon entropy of fiat/RWA-backed vs crypto-backed supply × 100).
 * `healthScore = round(0.30 quality + 0.20 chainEnvironment + 0.20 concentration + 0.20 pegStability + 0.10 backingDiversity)`.
 */
export const ChainHealthComponentsSchema = z.object({
  quality: z.number().min(0).max(100).nullable(),
  chainEnvironment: z.number().min(0).max(100),
  concentration: z.number().min(0).max(100).nullable(),
  pegStability: z.number().min(0).max(100),
  backingDiversity: z.number().min(0).max(100),
});

/**
 * What the health score rests on: `ratedShare` (0-1 of the chain's supply with a safety score),
 * `chainTier` (curated registry tier, null when none), `chainEnvironmentBasis` (`curated-tier`, or
 * `unknown-tier` when chainEnvironment is the neutral 50), `unavailableReason` (why `healthScore` is null:
 * `rated-share-below-50pct`, `no-supply`; null when scored).
 */
export const ChainHealthInputsSchema = z.object({
  ratedShare: z.number().min(0).max(1).nullable(),
  chainTier: z.string().nullable(),
  chainEnvironmentBasis: z.enum(["curated-tier", "unknown-tier"]),
  unavailableReason: z.enum(["rated-share-below-50pct", "no-supply"]).nullable(),
});

const Supply = {
  totalCirculatingUsd: z.number().nullable(),
  circulatingPrevDay: z.number().nullable(),
  circulatingPrevWeek: z.number().nullable(),
  circulatingPrevMonth: z.number().nullable(),
  change1d: z.number().nullable(),
  change7d: z.number().nullable(),
  change30d: z.number().nullable(),
};

/** One chain aggregate. USD; `dominanceShare` 0-1 of the global listed total; `coinHhi` 0-1. */
export const ChainRowSchema = z.object({
  id: z.string(),
  name: z.string(),
  ...Supply,
  coinCount: z.number().int(),
  dominanceShare: z.number().nullable(),
  topStablecoinId: z.string().nullable(),
  coinHhi: z.number().nullable(),
  healthScore: z.number().int().min(0).max(100).nullable(),
  healthBand: z.enum(CHAIN_HEALTH_BANDS).nullable(),
  healthComponents: ChainHealthComponentsSchema.nullable(),
  healthInputs: ChainHealthInputsSchema.nullable(),
  healthMethodologyVersion: z.string(),
});
export const ChainsPayloadSchema = z.object({
  chains: z.array(ChainRowSchema),
  globalTotalUsd: z.number(),
  healthMethodologyVersion: z.string(),
});
/** One coin on one chain; `shareOfChain` 0-1. */
export const ChainCoinRowSchema = z.object({
  id: z.string(),
  symbol: z.string(),
  name: z.string(),
  pegType: z.string(),
  circulatingUsd: z.number().nullable(),
  circulatingPrevDay: z.number().nullable(),
  circulatingPrevWeek: z.number().nullable(),
  circulatingPrevMonth: z.number().nullable(),
  shareOfChain: z.number().nullable(),
});
export const ChainDetailPayloadSchema = z.object({
  chain: ChainRowSchema,
  coins: z.array(ChainCoinRowSchema),
  healthMethodologyVersion: z.string(),
});

const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : a - b);

/** Health fields of a chain row from its `chain_health` columns (all null when the mart has no row for the chain). */
function chainHealth(
  r: Record<string, unknown>,
): Pick<z.infer<typeof ChainRowSchema>, "healthScore" | "healthBand" | "healthComponents" | "healthInputs"> {
  if (r.chain_environment_basis === null || r.chain_environment_basis === undefined)
    return { healthScore: null, healthBand: null, healthComponents: null, healthInputs: null };
  const score = num(r.health_score);
  return {
    healthScore: score,
    healthBand: (r.health_band as z.infer<typeof ChainRowSchema>["healthBand"]) ?? null,
    healthComponents: {
      quality: num(r.quality),
      chainEnvironment: requiredNum(r.chain_environment, "chain_health.chain_environment"),
      concentration: num(r.concentration),
      pegStability: requiredNum(r.peg_stability, "chain_health.peg_stability"),
      backingDiversity: requiredNum(r.backing_diversity, "chain_health.backing_diversity"),
    },
    healthInputs: {
      ratedShare: num(r.rated_share),
      chainTier: (r.chain_tier as string | null) ?? null,
      chainEnvironmentBasis: r.chain_environment_basis as "curated-tier" | "unknown-tier",
      unavailableReason: (r.health_unavailable_reason as "rated-share-below-50pct" | "no-supply" | null) ?? null,
    },
  };
}

function chainRow(r: Record<string, unknown>): z.infer<typeof ChainRowSchema> {
  const cur = num(r.circulating_usd);
  const [d, w, m] = [num(r.prev_day_usd), num(r.prev_week_usd), num(r.prev_month_usd)];
  return {
    id: String(r.chain_id),
    name: String(r.chain_name),
    totalCirculatingUsd: cur,
    circulatingPrevDay: d,
    circulatingPrevWeek: w,
    circulatingPrevMonth: m,
    change1d: diff(cur, d),
    change7d: diff(cur, w),
    change30d: diff(cur, m),
    coinCount: Number(r.coin_count),
    dominanceShare: num(r.dominance_share),
    topStablecoinId: (r.top_stablecoin_id as string) ?? null,
    coinHhi: num(r.coin_hhi),
    ...chainHealth(r),
    healthMethodologyVersion: CHAIN_HEALTH_METHODOLOGY_VERSION,
  };
}

/** `site-data/chains.json` and `site-data/chains/<chainId>.json` (source: DefiLlama `/stablecoins` chainCirculating). */
// Two outputs under one key (the list and a file per chain): sqlArtifact declares one output per key.
export const chainsArtifact: Artifact = {
  key: "chains",
  schemaVersion: "1.0.0",
  maxAgeSec: 1800,
  schema: z.union([ChainsPayloadSchema, ChainDetailPayloadSchema]),
  outputs: {
    list: { path: "site-data/chains.json", schema: ChainsPayloadSchema },
    detail: { path: "site-data/chains/{id}.json", schema: ChainDetailPayloadSchema },
  },
  description:
    "Chain aggregates of listed stablecoin supply with chain health scores (ballast-chain-health-v1); per-chain coin rows.",
  queries: { chains: sqlFile(import.meta.url, "chains"), coins: sqlFile(import.meta.url, "chain_coins") },
  assemble(rows, ctx) {
    const chains = rows.chains.map(chainRow);
    const globalTotalUsd = chains.reduce((s, c) => s + (c.totalCirculatingUsd ?? 0), 0);
    const files: ArtifactFile[] = [
      {
        path: chainsArtifact.outputs.list.path,
        payload: { chains, globalTotalUsd, healthMethodologyVersion: CHAIN_HEALTH_METHODOLOGY_VERSION },
        rows: chains.length,
      },
    ];
    const coinsByChain = new Map<string, Record<string, unknown>[]>();
    for (const r of rows.coins) {
      const list = coinsByChain.get(String(r.chain_id)) ?? [];
      list.push(r);
      coinsByChain.set(String(r.chain_id), list);
    }
    for (const chain of chains) {
      const coins = (coinsByChain.get(chain.id) ?? []).map((r) => ({
        id: String(r.stablecoin_id),
        symbol: String(r.symbol),
        name: String(r.name),
        pegType: String(r.peg_type),
        circulatingUsd: num(r.circulating_usd),
        circulatingPrevDay: num(r.prev_day_usd),
        circulatingPrevWeek: num(r.prev_week_usd),
        circulatingPrevMonth: num(r.prev_month_usd),
        shareOfChain: chain.totalCirculatingUsd ? (num(r.circulating_usd) ?? 0) / chain.totalCirculatingUsd : null,
      }));
      files.push({
        path: outputPath(chainsArtifact.outputs.detail, chain.id),
        payload: { chain, coins, healthMethodologyVersion: CHAIN_HEALTH_METHODOLOGY_VERSION },
        rows: coins.length,
      });
    }
    return { files, dataAsOf: ctx.sourceObservedAt["defillama.stablecoins"] ?? null };
  },
};
