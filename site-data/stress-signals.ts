import { z } from "zod";
import {
  DEWS_BANDS,
  DEWS_LABEL,
  DEWS_VERSION,
  lastDay,
  SIGNAL_WEIGHTS,
} from "../pipelines/analytics/stress-signals.version.ts";
import { type Artifact, daySeconds, num, requiredNum, sqlFile } from "./contract.ts";
import { methodology, MethodologySchema } from "./peg-summary.ts";

const Band = z.enum(DEWS_BANDS);
const SIGNAL_NAMES = Object.keys(SIGNAL_WEIGHTS) as [keyof typeof SIGNAL_WEIGHTS, ...(keyof typeof SIGNAL_WEIGHTS)[]];
/** One signal: value 0-100 (null when unavailable: never zero-filled), weight, availability, why not, and the inputs behind the value. */
export const DewsSignalSchema = z.object({
  value: z.number().min(0).max(100).nullable(),
  weight: z.number(),
  available: z.boolean(),
  reason: z.string().optional(),
  inputs: z.record(z.string(), z.union([z.number(), z.string(), z.null()])).optional(),
});
/** A coin's DEWS on the as-of day: score 0-100 and band, the base before amplifiers, amplifiers, signals, the signals that drove it. */
export const DewsCoinSchema = z.object({
  stablecoinId: z.string(),
  symbol: z.string(),
  pegType: z.string(),
  date: z.number().int(),
  score: z.number().int().min(0).max(100),
  band: Band,
  baseScore: z.number(),
  amplifiers: z.object({ psi: z.number(), contagion: z.number() }),
  availableWeight: z.number(),
  mcapUsd: z.number().nullable(),
  signals: z.object(
    Object.fromEntries(SIGNAL_NAMES.map((k) => [k, DewsSignalSchema])) as Record<
      keyof typeof SIGNAL_WEIGHTS,
      typeof DewsSignalSchema
    >,
  ),
  /** Available signals with a non-zero contribution, largest weight × value first (at most 3). */
  drivers: z.array(z.enum(SIGNAL_NAMES)),
  methodologyVersion: z.string(),
});
const BandCounts = z.object(
  Object.fromEntries(DEWS_BANDS.map((b) => [b, z.number().int()])) as Record<(typeof DEWS_BANDS)[number], z.ZodNumber>,
);
export const DewsSummarySchema = z.object({
  date: z.number().int(),
  coinsScored: z.number().int(),
  bands: BandCounts,
  worst: z.object({ stablecoinId: z.string(), score: z.number().int(), band: Band }).nullable(),
});
export const DewsCoinHistoryRowSchema = z.object({ date: z.number().int(), score: z.number().int(), band: Band });
export const DewsUniverseHistoryRowSchema = z.object({
  date: z.number().int(),
  coinsScored: z.number().int(),
  meanScore: z.number(),
  bands: BandCounts,
});
/** Stored file: current rows, per-coin and universe history over 365 days, every registry id with its exclusion reason. */
export const StressSignalsFileSchema = z.object({
  coins: z.array(DewsCoinSchema),
  summary: DewsSummarySchema,
  history: z.record(z.string(), z.array(DewsCoinHistoryRowSchema)),
  universeHistory: z.array(DewsUniverseHistoryRowSchema),
  /** Registry id → `nav-token` / `floating-peg` (never scored) or null. */
  stablecoinIds: z.record(z.string(), z.enum(["nav-token", "floating-peg"]).nullable()),
  methodology: MethodologySchema,
});
export type StressSignalsFile = z.infer<typeof StressSignalsFileSchema>;

const emptyBands = () =>
  Object.fromEntries(DEWS_BANDS.map((b) => [b, 0])) as Record<(typeof DEWS_BANDS)[number], number>;

/** `site-data/stress-signals.json` — DEWS (pipelines/analytics/stress-signals.ts). */
export const stressSignalsArtifact: Artifact = {
  key: "stress-signals",
  schemaVersion: "1.0.0",
  maxAgeSec: 3600,
  schema: StressSignalsFileSchema,
  outputs: { main: { path: "site-data/stress-signals.json", schema: StressSignalsFileSchema } },
  description: "Depeg early-warning scores per coin: current signals, 365-day history.",
  queries: { rows: sqlFile(import.meta.url, "dews_daily"), coins: sqlFile(import.meta.url, "dews_coins") },
  assemble(rows, ctx) {
    const day = lastDay(ctx.asOf);
    const history: Record<string, z.infer<typeof DewsCoinHistoryRowSchema>[]> = {};
    const byDate = new Map<number, { n: number; sum: number; bands: ReturnType<typeof emptyBands> }>();
    const coins: z.infer<typeof DewsCoinSchema>[] = [];
    for (const r of rows.rows) {
      const date = daySeconds(r.date),
        score = requiredNum(r.score, "dews_daily.score"),
        band = r.band as z.infer<typeof Band>,
        id = String(r.stablecoin_id);
      history[id] ??= [];
      history[id].push({ date, score, band });
      const u = byDate.get(date) ?? { n: 0, sum: 0, bands: emptyBands() };
      u.n++;
      u.sum += score;
      u.bands[band]++;
      byDate.set(date, u);
      if (date !== day) continue;
      const signals = JSON.parse(String(r.signals_json)) as Record<
        string,
        { value: number | null; weight: number; available: boolean }
      >;
      const drivers = Object.entries(signals)
        .filter(([, s]) => s.available && (s.value ?? 0) > 0)
        // values are > 0 here (filtered above)
        .sort(([a, x], [b, y]) => y.weight * (y.value ?? 0) - x.weight * (x.value ?? 0) || a.localeCompare(b))
        .slice(0, 3)
        .map(([k]) => k as keyof typeof SIGNAL_WEIGHTS);
      coins.push({
        stablecoinId: id,
        symbol: String(r.symbol),
        pegType: String(r.peg_type),
        date,
        score,
        band,
        baseScore: requiredNum(r.base_score, "dews_daily.base_score"),
        amplifiers: {
          psi: requiredNum(r.psi_amplifier, "dews_daily.psi_amplifier"),
          contagion: requiredNum(r.contagion_amplifier, "dews_daily.contagion_amplifier"),
        },
        availableWeight: requiredNum(r.available_weight, "dews_daily.available_weight"),
        mcapUsd: num(r.mcap_usd),
        signals: signals as never,
        drivers,
        methodologyVersion: String(r.methodology_version),
      });
    }
    coins.sort((a, b) => b.score - a.score || a.stablecoinId.localeCompare(b.stablecoinId));
    const bands = emptyBands();
    for (const c of coins) bands[c.band]++;
    const payload: StressSignalsFile = {
      coins,
      summary: {
        date: day,
        coinsScored: coins.length,
        bands,
        worst: coins[0] ? { stablecoinId: coins[0].stablecoinId, score: coins[0].score, band: coins[0].band } : null,
      },
      history,
      universeHistory: [...byDate.entries()]
        .sort(([a], [b]) => a - b)
        .map(([date, u]) => ({
          date,
          coinsScored: u.n,
          meanScore: Math.round((u.sum / u.n) * 10) / 10,
          bands: u.bands,
        })),
      stablecoinIds: Object.fromEntries(
        rows.coins.map((c) => [String(c.id), (c.excluded_reason ?? null) as "nav-token" | "floating-peg" | null]),
      ),
      methodology: methodology(DEWS_VERSION, DEWS_LABEL, ctx.asOf),
    };
    return {
      files: [{ path: stressSignalsArtifact.outputs.main.path, payload, rows: coins.length }],
      dataAsOf: ctx.sourceObservedAt["defillama.stablecoins"] ?? null,
    };
  },
};
