import { z } from "zod";
import { mapObject, sqlArtifact } from "./contract.ts";
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

/** A row of stablecoin_summary.sql: the summary with supplyByPegUsd as MAP entries, and the supply mode and day. */
type SummaryRow = Omit<StablecoinSummary, "supplyByPegUsd"> & {
  supplyByPegUsd: { key: string; value: number }[];
  supply_mode: string | null;
  supply_date: string | null;
};

/**
 * `site-data/stablecoin-summary.json` — one summary per coin of the current list (source: DefiLlama
 * `/stablecoins`, or the supply history without a list capture at as-of); same values as the list.
 */
export const stablecoinSummaryArtifact = sqlArtifact(import.meta.url, {
  key: "stablecoin-summary",
  schemaVersion: "1.0.0",
  maxAgeSec: 600,
  description: "Per-coin supply summary with null-vs-zero rules (spec 2.4).",
  path: "site-data/stablecoin-summary.json",
  schema: StablecoinSummariesSchema,
  sql: "stablecoin_summary",
  shape: "many",
  // an object keyed by stablecoin id, its supplyByPegUsd keyed by pegType
  transform: (rows: SummaryRow[]): Record<string, StablecoinSummary> =>
    Object.fromEntries(
      rows.map(({ supply_mode, supply_date, ...r }) => [r.id, { ...r, supplyByPegUsd: mapObject(r.supplyByPegUsd) }]),
    ),
  rows: (summaries: Record<string, StablecoinSummary>) => Object.keys(summaries).length,
  dataAsOf: (_summaries, ctx, rows: SummaryRow[]) => supplyDataAsOf(rows, ctx.sourceObservedAt),
});
