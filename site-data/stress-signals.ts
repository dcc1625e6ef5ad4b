import { z } from "zod";
import {
  DEWS_BANDS,
  DEWS_LABEL,
  DEWS_VERSION,
  lastDay,
  SIGNAL_WEIGHTS,
} from "../pipelines/analytics/stress-signals.version.ts";
import { mapObject, sqlArtifact } from "./contract.ts";
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

type DewsCoin = z.infer<typeof DewsCoinSchema>;
type MapEntries<V> = { key: string; value: V }[];

/** The row of stress_signals.sql: the as-of day's coins (signals as JSON text, no drivers), the rest as MAP entries. */
type StressSignalsRow = {
  coins: (Omit<DewsCoin, "signals" | "drivers"> & { signals: string })[];
  history: MapEntries<z.infer<typeof DewsCoinHistoryRowSchema>[]>;
  universeHistory: (Omit<z.infer<typeof DewsUniverseHistoryRowSchema>, "bands"> & { bands: MapEntries<number> })[];
  stablecoinIds: MapEntries<"nav-token" | "floating-peg" | null>;
};

/** Available signals with a non-zero contribution, largest weight × value first, then by name (at most 3). */
function drivers(signals: Record<string, { value: number | null; weight: number; available: boolean }>) {
  return (
    Object.entries(signals)
      .filter(([, s]) => s.available && (s.value ?? 0) > 0)
      // values are > 0 here (filtered above)
      .sort(([a, x], [b, y]) => y.weight * (y.value ?? 0) - x.weight * (x.value ?? 0) || a.localeCompare(b))
      .slice(0, 3)
      .map(([k]) => k as keyof typeof SIGNAL_WEIGHTS)
  );
}

/** `site-data/stress-signals.json` — DEWS (pipelines/analytics/stress-signals.ts). */
export const stressSignalsArtifact = sqlArtifact(import.meta.url, {
  key: "stress-signals",
  schemaVersion: "1.0.0",
  maxAgeSec: 3600,
  description: "Depeg early-warning scores per coin: current signals, 365-day history.",
  path: "site-data/stress-signals.json",
  schema: StressSignalsFileSchema,
  sql: "stress_signals",
  shape: "one",
  // signals are JSON documents in the mart; drivers, the coins' order, the summary, every band counted
  // (zero included) and the methodology are computed in TS
  transform: (row: StressSignalsRow, ctx): StressSignalsFile => {
    const coins: DewsCoin[] = row.coins
      .map(({ signals, methodologyVersion, ...c }) => {
        const parsed = JSON.parse(signals);
        return { ...c, signals: parsed, drivers: drivers(parsed), methodologyVersion };
      })
      .sort((a, b) => b.score - a.score || a.stablecoinId.localeCompare(b.stablecoinId));
    const bands = emptyBands();
    for (const c of coins) bands[c.band]++;
    return {
      coins,
      summary: {
        date: lastDay(ctx.asOf),
        coinsScored: coins.length,
        bands,
        worst: coins[0] ? { stablecoinId: coins[0].stablecoinId, score: coins[0].score, band: coins[0].band } : null,
      },
      history: mapObject(row.history),
      universeHistory: row.universeHistory.map((u) => ({ ...u, bands: { ...emptyBands(), ...mapObject(u.bands) } })),
      stablecoinIds: mapObject(row.stablecoinIds),
      methodology: methodology(DEWS_VERSION, DEWS_LABEL, ctx.asOf),
    };
  },
  rows: (file: StressSignalsFile) => file.coins.length,
  dataAsOf: (_file, ctx) => ctx.sourceObservedAt["defillama.stablecoins"] ?? null,
});
