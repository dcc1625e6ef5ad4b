import { z } from "zod";
import { type Artifact, daySeconds, requiredNum, sqlFile } from "./contract.ts";

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
export const nonUsdShareArtifact: Artifact = {
  key: "non-usd-share",
  schemaVersion: "1.1.0",
  maxAgeSec: 86400,
  schema: NonUsdSharePayloadSchema,
  outputs: { main: { path: "site-data/non-usd-share.json", schema: NonUsdSharePayloadSchema } },
  description: "Non-USD peg share of listed supply over time.",
  queries: { days: sqlFile(import.meta.url, "non_usd_share") },
  assemble(rows, ctx) {
    const history = rows.days.map((r) => ({
      date: daySeconds(r.date),
      totalUsd: requiredNum(r.total_usd, "non_usd_share.total_usd"),
      commodityUsd: requiredNum(r.commodity_usd, "non_usd_share.commodity_usd"),
      fiatNonUsdUsd: requiredNum(r.fiat_non_usd_usd, "non_usd_share.fiat_non_usd_usd"),
      commoditySharePct: requiredNum(r.commodity_share_pct, "non_usd_share.commodity_share_pct"),
      fiatNonUsdSharePct: requiredNum(r.fiat_non_usd_share_pct, "non_usd_share.fiat_non_usd_share_pct"),
      floatingUsd: requiredNum(r.floating_usd, "non_usd_share.floating_usd"),
      floatingSharePct: requiredNum(r.floating_share_pct, "non_usd_share.floating_share_pct"),
    }));
    return {
      files: [
        {
          path: nonUsdShareArtifact.outputs.main.path,
          payload: { current: history.at(-1) ?? null, history },
          rows: history.length,
        },
      ],
      dataAsOf: ctx.sourceObservedAt["defillama.stablecoins"] ?? null,
    };
  },
};
