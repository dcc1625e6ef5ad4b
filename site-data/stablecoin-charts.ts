import { z } from "zod";
import { type Artifact, daySeconds, num, sqlFile } from "./contract.ts";

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

/** `site-data/stablecoin-charts.json` — aggregate supply over time (sources: DefiLlama charts, our list). */
export const stablecoinChartsArtifact: Artifact = {
  key: "stablecoin-charts",
  schemaVersion: "1.0.0",
  maxAgeSec: 3600,
  schema: StablecoinChartsSchema,
  outputs: { main: { path: "site-data/stablecoin-charts.json", schema: StablecoinChartsSchema } },
  description: "Aggregate USD supply over time (spec 2.3).",
  queries: { points: sqlFile(import.meta.url, "stablecoin_charts") },
  assemble(rows) {
    const byDate = new Map<number, z.infer<typeof ChartPointSchema>>();
    for (const r of rows.points) {
      const date = daySeconds(r.date);
      const p = byDate.get(date) ?? { date, aggregateUniverse: r.aggregate_universe as never, totalCirculatingUSD: {} };
      p.totalCirculatingUSD[String(r.peg_type)] = num(r.circulating_usd);
      byDate.set(date, p);
    }
    const points = [...byDate.values()];
    return {
      files: [{ path: stablecoinChartsArtifact.outputs.main.path, payload: points, rows: points.length }],
      dataAsOf: points.length ? points[points.length - 1].date : null,
    };
  },
};
