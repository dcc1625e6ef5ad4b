import { z } from "zod";
import { type Artifact, type ArtifactFile, daySeconds, num, outputPath, sqlFile } from "./contract.ts";

/** TokenPoint (spec 2.3): date (Unix s), USD and native-unit supply keyed by pegType. */
export const TokenPointSchema = z.object({
  date: z.number().int(),
  totalCirculatingUSD: z.record(z.string(), z.number()),
  totalCirculating: z.record(z.string(), z.number()),
});
export const StablecoinDetailSchema = z.object({ tokens: z.array(TokenPointSchema) });

/**
 * `site-data/stablecoin/<id>.json` for every registry coin: daily supply history (sources:
 * DefiLlama `/stablecoin/{id}`, the `/stablecoins` list, CoinGecko market caps; supply_history_daily).
 * Native units stay native; USD is native x the supply valuation rule of the point's own day (USD pegs
 * 1, fiat pegs the ECB rate, gold/NAV/floating the accepted consensus price of that day), the same
 * rule as the list, charts and chains. A point whose USD is unavailable keeps `totalCirculatingUSD: {}`.
 */
export const stablecoinDetailArtifact: Artifact = {
  key: "stablecoin-detail",
  schemaVersion: "1.0.0",
  maxAgeSec: 600,
  schema: StablecoinDetailSchema,
  outputs: { main: { path: "site-data/stablecoin/{id}.json", schema: StablecoinDetailSchema } },
  description: "Per-coin daily supply history (spec 2.3).",
  queries: { points: sqlFile(import.meta.url, "stablecoin_detail") },
  assemble(rows, ctx) {
    const byCoin = new Map<string, z.infer<typeof TokenPointSchema>[]>();
    for (const r of rows.points) {
      const id = String(r.stablecoin_id);
      const list = byCoin.get(id) ?? [];
      byCoin.set(id, list);
      if (r.date === null) continue;
      const usd = num(r.circulating_usd);
      const native = num(r.circulating_native);
      const peg = String(r.peg_type);
      list.push({
        date: daySeconds(r.date),
        totalCirculatingUSD: usd === null ? {} : { [peg]: usd },
        totalCirculating: native === null ? {} : { [peg]: native },
      });
    }
    const files: ArtifactFile[] = [...byCoin.entries()].map(([id, tokens]) => ({
      path: outputPath(stablecoinDetailArtifact.outputs.main, id),
      payload: { tokens },
      rows: tokens.length,
    }));
    return { files, dataAsOf: ctx.sourceObservedAt["defillama.stablecoins"] ?? null };
  },
};
