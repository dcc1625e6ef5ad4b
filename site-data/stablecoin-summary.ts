import { z } from "zod";
import { type Artifact, num, sqlFile } from "./contract.ts";
import { supplyDataAsOf } from "./stablecoins.ts";

/** Stablecoin summary (spec 2.4). USD values; `change*` are USD differences current − previous. */
export const StablecoinSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  symbol: z.string(),
  pegType: z.string(),
  pegMechanism: z.string(),
  priceUsd: z.number().nullable(),
  priceSource: z.string(),
  priceConfidence: z.enum(["high", "single-source", "low", "fallback"]).nullable(),
  supplySource: z.string().nullable(),
  supplyByPegUsd: z.record(z.string(), z.number()),
  supplyUsd: z.object({
    current: z.number().nullable(),
    prevDay: z.number().nullable(),
    prevWeek: z.number().nullable(),
    prevMonth: z.number().nullable(),
    change1d: z.number().nullable(),
    change7d: z.number().nullable(),
    change30d: z.number().nullable(),
  }),
  currentUnavailableReason: z.literal("supply-buckets-missing").nullable(),
});
export type StablecoinSummary = z.infer<typeof StablecoinSummarySchema>;

/** The shared summary cache: stablecoin id → summary. */
export const StablecoinSummariesSchema = z.record(z.string(), StablecoinSummarySchema);

const change = (current: number | null, prev: number | null) =>
  current === null || prev === null ? null : current - prev;

/**
 * `site-data/stablecoin-summary.json` — one summary per coin of the current list (source: DefiLlama
 * `/stablecoins`, or the supply history without a list capture at as-of); same values as the list.
 */
export const stablecoinSummaryArtifact: Artifact = {
  key: "stablecoin-summary",
  schemaVersion: "1.0.0",
  maxAgeSec: 600,
  schema: StablecoinSummariesSchema,
  outputs: { main: { path: "site-data/stablecoin-summary.json", schema: StablecoinSummariesSchema } },
  description: "Per-coin supply summary with null-vs-zero rules (spec 2.4).",
  queries: { coins: sqlFile(import.meta.url, "stablecoin_summary") },
  assemble(rows, ctx) {
    const out: Record<string, StablecoinSummary> = {};
    for (const r of rows.coins) {
      const current = num(r.circulating_usd);
      const [prevDay, prevWeek, prevMonth] = [num(r.prev_day_usd), num(r.prev_week_usd), num(r.prev_month_usd)];
      const price = num(r.price);
      out[String(r.stablecoin_id)] = {
        id: String(r.stablecoin_id),
        name: String(r.name),
        symbol: String(r.symbol),
        pegType: String(r.peg_type),
        pegMechanism: String(r.peg_mechanism),
        priceUsd: price,
        priceSource: price === null ? "missing" : String(r.price_source),
        priceConfidence: price === null ? null : (r.price_confidence as "high" | "single-source" | "low" | "fallback"),
        supplySource: (r.supply_source as string | null) ?? null,
        supplyByPegUsd: current === null ? {} : { [String(r.peg_type)]: current },
        supplyUsd: {
          current,
          prevDay,
          prevWeek,
          prevMonth,
          change1d: change(current, prevDay),
          change7d: change(current, prevWeek),
          change30d: change(current, prevMonth),
        },
        currentUnavailableReason: current === null ? "supply-buckets-missing" : null,
      };
    }
    return {
      files: [{ path: stablecoinSummaryArtifact.outputs.main.path, payload: out, rows: Object.keys(out).length }],
      dataAsOf: supplyDataAsOf(rows.coins, ctx.sourceObservedAt),
    };
  },
};
