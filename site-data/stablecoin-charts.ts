import { z } from "zod";
import { sqlArtifact } from "./contract.ts";

/**
 * Chart point (spec 2.3). `aggregateUniverse`: `defillama-all` (DefiLlama's all-chain total, which
 * includes double-counted assets; only the all-peg `total` key is known) or `ballast-listed` (sum of
 * the coins we list, with a key per pegType plus `total`).
 */
export const ChartPointSchema = z.object({
  date: z.number().int(),
  aggregateUniverse: z.enum(["defillama-all", "ballast-listed"]).optional(),
  totalCirculatingUSD: z.record(z.string(), z.number().nullable()),
});
export const StablecoinChartsSchema = z.array(ChartPointSchema);

type ChartPoint = z.infer<typeof ChartPointSchema>;
/** A row of stablecoin_charts.sql: a day's USD supply as a list of pegType entries. */
type ChartRow = Omit<ChartPoint, "totalCirculatingUSD"> & { byPeg: { pegType: string; usd: number | null }[] };

/** `site-data/stablecoin-charts.json` — aggregate supply over time (sources: DefiLlama charts, our list). */
export const stablecoinChartsArtifact = sqlArtifact(import.meta.url, {
  key: "stablecoin-charts",
  schemaVersion: "1.0.0",
  maxAgeSec: 3600,
  description: "Aggregate USD supply over time (spec 2.3).",
  path: "site-data/stablecoin-charts.json",
  schema: StablecoinChartsSchema,
  sql: "stablecoin_charts",
  shape: "many",
  // an object keyed by pegType: SQL gives the entries, TS the object
  transform: (rows: ChartRow[]): ChartPoint[] =>
    rows.map(({ date, aggregateUniverse, byPeg }) => ({
      date,
      aggregateUniverse,
      totalCirculatingUSD: Object.fromEntries(byPeg.map((e) => [e.pegType, e.usd])),
    })),
  dataAsOf: (points: ChartPoint[]) => points.at(-1)?.date ?? null,
});
