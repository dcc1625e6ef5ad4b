import { z } from "zod";
import { type Artifact, type ArtifactFile, daySeconds, num, outputPath, sqlFile } from "./contract.ts";

/**
 * One supply-history point: UTC day (Unix s), USD supply (native x the valuation rule of that day; null
 * when no unit value exists), native units (level-adjusted to the better source when a fallback source
 * fills the day), and the source of the units.
 */
export const SupplyHistoryPointSchema = z.object({
  date: z.number().int(),
  circulatingUsd: z.number().nullable(),
  circulatingNative: z.number().nullable(),
  source: z.enum(["defillama-detail", "defillama-list", "coingecko-market-cap"]),
});
export const SupplyHistorySchema = z.array(SupplyHistoryPointSchema);

/** `site-data/supply-history/<id>.json` — daily supply per coin, oldest first. */
export const supplyHistoryArtifact: Artifact = {
  key: "supply-history",
  schemaVersion: "1.0.0",
  maxAgeSec: 86400,
  schema: SupplyHistorySchema,
  outputs: { main: { path: "site-data/supply-history/{id}.json", schema: SupplyHistorySchema } },
  description: "Daily supply history per coin with the source of each point.",
  queries: { points: sqlFile(import.meta.url, "supply_history") },
  assemble(rows, ctx) {
    const byCoin = new Map<string, z.infer<typeof SupplyHistoryPointSchema>[]>();
    for (const r of rows.points) {
      const list = byCoin.get(String(r.stablecoin_id)) ?? [];
      list.push({
        date: daySeconds(r.date),
        circulatingUsd: num(r.circulating_usd),
        circulatingNative: num(r.circulating_native),
        source: r.source as never,
      });
      byCoin.set(String(r.stablecoin_id), list);
    }
    const files: ArtifactFile[] = [...byCoin.entries()].map(([id, points]) => ({
      path: outputPath(supplyHistoryArtifact.outputs.main, id),
      payload: points,
      rows: points.length,
    }));
    return { files, dataAsOf: ctx.sourceObservedAt["defillama.stablecoins"] ?? null };
  },
};
