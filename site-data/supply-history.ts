import { z } from "zod";
import { sqlArtifact } from "./contract.ts";

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
export const supplyHistoryArtifact = sqlArtifact(import.meta.url, {
  key: "supply-history",
  schemaVersion: "1.0.0",
  maxAgeSec: 86400,
  description: "Daily supply history per coin with the source of each point.",
  path: "site-data/supply-history/{id}.json",
  idColumn: "stablecoinId",
  schema: SupplyHistorySchema,
  sql: "supply_history",
  shape: "many",
  dataAsOf: (_points, ctx) => ctx.sourceObservedAt["defillama.stablecoins"] ?? null,
});
