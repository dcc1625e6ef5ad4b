import { z } from "zod";
import { sqlArtifact } from "./contract.ts";

/** TokenPoint (spec 2.3): date (Unix s), USD and native-unit supply keyed by pegType. */
export const TokenPointSchema = z.object({
  date: z.number().int(),
  totalCirculatingUSD: z.record(z.string(), z.number()),
  totalCirculating: z.record(z.string(), z.number()),
});
export const StablecoinDetailSchema = z.object({ tokens: z.array(TokenPointSchema) });
type StablecoinDetail = z.infer<typeof StablecoinDetailSchema>;
/** A point of stablecoin_detail.sql: UTC day (Unix s), pegType, USD and native supply (null when unknown). */
type DetailPoint = { date: number; pegType: string; usd: number | null; native: number | null };

/**
 * `site-data/stablecoin/<id>.json` for every registry coin: daily supply history (sources:
 * DefiLlama `/stablecoin/{id}`, the `/stablecoins` list, CoinGecko market caps; supply_history_daily).
 * Native units stay native; USD is native x the supply valuation rule of the point's own day (USD pegs
 * 1, fiat pegs the ECB rate, gold/NAV/floating the accepted consensus price of that day), the same
 * rule as the list, charts and chains. A point whose USD is unavailable keeps `totalCirculatingUSD: {}`.
 */
export const stablecoinDetailArtifact = sqlArtifact(import.meta.url, {
  key: "stablecoin-detail",
  schemaVersion: "1.0.0",
  maxAgeSec: 600,
  description: "Per-coin daily supply history (spec 2.3).",
  path: "site-data/stablecoin/{id}.json",
  idColumn: "stablecoinId",
  schema: StablecoinDetailSchema,
  sql: "stablecoin_detail",
  shape: "one",
  // supply keyed by pegType, `{}` when unknown: SQL gives the figures, TS the objects
  transform: ({ points }: { points: DetailPoint[] }): StablecoinDetail => ({
    tokens: points.map((p) => ({
      date: p.date,
      totalCirculatingUSD: p.usd === null ? {} : { [p.pegType]: p.usd },
      totalCirculating: p.native === null ? {} : { [p.pegType]: p.native },
    })),
  }),
  rows: (d: StablecoinDetail) => d.tokens.length,
  dataAsOf: (_details, ctx) => ctx.sourceObservedAt["defillama.stablecoins"] ?? null,
});
