import { z } from "zod";
import { type Artifact, type ArtifactFile, num, outputPath, sqlFile } from "./contract.ts";

/** Methodology version of chain aggregates; health scores need safety grades, not yet published (null). */
export const CHAIN_HEALTH_METHODOLOGY_VERSION = "chain-health-0.1-unrated";

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
  healthScore: z.number().nullable(),
  healthBand: z.string().nullable(),
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

function chainRow(r: Record<string, unknown>): z.infer<typeof ChainRowSchema> {
  const cur = num(r.circulating_usd);
  const [d, w, m] = [num(r.prev_day_usd), num(r.prev_week_usd), num(r.prev_month_usd)];
  return {
    id: String(r.chain_id), name: String(r.chain_name), totalCirculatingUsd: cur, circulatingPrevDay: d,
    circulatingPrevWeek: w, circulatingPrevMonth: m, change1d: diff(cur, d), change7d: diff(cur, w), change30d: diff(cur, m),
    coinCount: Number(r.coin_count), dominanceShare: num(r.dominance_share), topStablecoinId: (r.top_stablecoin_id as string) ?? null,
    coinHhi: num(r.coin_hhi), healthScore: null, healthBand: null,
  };
}

/** `site-data/chains.json` and `site-data/chains/<chainId>.json` (source: DefiLlama `/stablecoins` chainCirculating). */
export const chainsArtifact: Artifact = {
  key: "chains",
  schemaVersion: "1.0.0",
  maxAgeSec: 1800,
  schema: z.union([ChainsPayloadSchema, ChainDetailPayloadSchema]),
  outputs: {
    list: { path: "site-data/chains.json", schema: ChainsPayloadSchema },
    detail: { path: "site-data/chains/{id}.json", schema: ChainDetailPayloadSchema },
  },
  description: "Chain aggregates of listed stablecoin supply; per-chain coin rows.",
  queries: { chains: sqlFile(import.meta.url, "chains"), coins: sqlFile(import.meta.url, "chain_coins") },
  assemble(rows, ctx) {
    const chains = rows.chains.map(chainRow);
    const globalTotalUsd = chains.reduce((s, c) => s + (c.totalCirculatingUsd ?? 0), 0);
    const files: ArtifactFile[] = [{
      path: chainsArtifact.outputs.list.path,
      payload: { chains, globalTotalUsd, healthMethodologyVersion: CHAIN_HEALTH_METHODOLOGY_VERSION },
      rows: chains.length,
    }];
    const coinsByChain = new Map<string, Record<string, unknown>[]>();
    for (const r of rows.coins) {
      const list = coinsByChain.get(String(r.chain_id)) ?? [];
      list.push(r);
      coinsByChain.set(String(r.chain_id), list);
    }
    for (const chain of chains) {
      const coins = (coinsByChain.get(chain.id) ?? []).map((r) => ({
        id: String(r.stablecoin_id), symbol: String(r.symbol), name: String(r.name), pegType: String(r.peg_type),
        circulatingUsd: num(r.circulating_usd), circulatingPrevDay: num(r.prev_day_usd), circulatingPrevWeek: num(r.prev_week_usd),
        circulatingPrevMonth: num(r.prev_month_usd),
        shareOfChain: chain.totalCirculatingUsd ? (num(r.circulating_usd) ?? 0) / chain.totalCirculatingUsd : null,
      }));
      files.push({ path: outputPath(chainsArtifact.outputs.detail, chain.id), payload: { chain, coins, healthMethodologyVersion: CHAIN_HEALTH_METHODOLOGY_VERSION }, rows: coins.length });
    }
    return { files, dataAsOf: ctx.sourceObservedAt["defillama.stablecoins"] ?? null };
  },
};
