import { z } from "zod";
import { sqlArtifact } from "./contract.ts";

/**
 * One day of non-USD share: USD totals and percent shares (0-100, 4 dp). Groups: `commodity` (gold/
 * silver pegs), `fiatNonUsd` (other non-USD peg currencies), `floating` (floating pegs: CPI-indexed or
 * redemption-rate targets, DefiLlama `peggedVAR`; counted in `fiatNonUsd` before it had its own group).
 * NAV tokens count with their peg currency.
 */
export const NonUsdSharePointSchema = z.object({
  date: z.number().int(),
  totalUsd: z.number(),
  commodityUsd: z.number(),
  fiatNonUsdUsd: z.number(),
  commoditySharePct: z.number(),
  fiatNonUsdSharePct: z.number(),
  floatingUsd: z.number(),
  floatingSharePct: z.number(),
});
export const NonUsdSharePayloadSchema = z.object({
  current: NonUsdSharePointSchema.nullable(),
  history: z.array(NonUsdSharePointSchema),
});

/**
 * `site-data/non-usd-share.json` — share of commodity (gold/silver), non-USD fiat and floating pegs in
 * listed supply, on days where the whole listed universe was observed (list captures and their
 * 1/7/30-day buckets), valued by the one supply valuation rule.
 */
export const nonUsdShareArtifact = sqlArtifact(import.meta.url, {
  key: "non-usd-share",
  schemaVersion: "1.1.0",
  maxAgeSec: 86400,
  description: "Non-USD peg share of listed supply over time.",
  path: "site-data/non-usd-share.json",
  schema: NonUsdSharePayloadSchema,
  sql: "non_usd_share",
  shape: "one",
  rows: (p: z.infer<typeof NonUsdSharePayloadSchema>) => p.history.length,
  dataAsOf: (_payload, ctx) => ctx.sourceObservedAt["defillama.stablecoins"] ?? null,
});
