import { z } from "zod";
import { lastDay } from "../pipelines/analytics/stress-signals.version.ts";
import { PSI_BANDS, PSI_LABEL, PSI_VERSION, psiBand } from "../pipelines/analytics/stability-index.version.ts";
import { sqlArtifact } from "./contract.ts";
import { methodology, MethodologySchema } from "./peg-summary.ts";

const Band = z.enum(PSI_BANDS);
/** The four parts of a reading (index points): severity 0-68, breadth 0-17, stressBreadth 0-5 (subtracted), trend −5..5 (added). */
export const PsiComponentsSchema = z.object({
  severity: z.number(),
  breadth: z.number(),
  stressBreadth: z.number(),
  trend: z.number(),
});
/** A coin with a depeg incident open that day: deviation (bps, signed), USD market cap (null: unknown, weighs nothing), age (days), depreciation factor. */
export const PsiContributorSchema = z.object({
  id: z.string(),
  symbol: z.string(),
  bps: z.number().int(),
  mcapUsd: z.number().nullable(),
  ageDays: z.number().int(),
  factor: z.number(),
  /** `supply` (that day's circulating USD), `cemetery-peak` (dead coin around its death: recorded peak × price ratio), `unknown`. */
  mcapBasis: z.enum(["supply", "cemetery-peak", "unknown"]),
});
/** One daily reading (date: Unix s of 00:00 UTC; the day covers the 24 h ending at the next midnight). Score null when no market cap is known. */
export const PsiHistoryRowSchema = z.object({
  date: z.number().int(),
  score: z.number().min(0).max(100).nullable(),
  band: Band.nullable(),
  methodologyVersion: z.string(),
});
export const PsiDetailRowSchema = PsiHistoryRowSchema.extend({ components: PsiComponentsSchema });
export const PsiCurrentSchema = z.object({
  score: z.number().min(0).max(100),
  band: Band,
  avg24h: z.number().min(0).max(100),
  avg24hBand: Band,
  components: PsiComponentsSchema,
  contributors: z.array(PsiContributorSchema),
  totalMcapUsd: z.number(),
  computedAt: z.number().int(),
  methodologyVersion: z.string(),
});
/** Stored file: current reading, every daily row with components (oldest first), methodology. */
export const StabilityIndexFileSchema = z.object({
  current: PsiCurrentSchema.nullable(),
  history: z.array(PsiDetailRowSchema),
  methodology: MethodologySchema,
});
/** What the route reads: rows are checked one by one (a malformed row is dropped and counted, `malformedRows`). */
export const StabilityIndexStoredSchema = z.object({
  current: z.unknown(),
  history: z.array(z.unknown()),
  methodology: MethodologySchema,
});
/** `/api/stability-index` body (spec 2.10). `components` on history rows and `malformedRows` only with `detail=true`. */
export const StabilityIndexResponseSchema = z.object({
  current: PsiCurrentSchema.nullable(),
  history: z.array(z.union([PsiDetailRowSchema, PsiHistoryRowSchema])),
  malformedRows: z.number().int().optional(),
  methodology: MethodologySchema,
});

const r1 = (x: number) => Math.round(x * 10) / 10;

/**
 * avg24h: the mean score over the 24 h before as-of from the daily readings, each weighted by the
 * hours of that span it covers: the current day's window covers `hours` (24 when as-of is at
 * midnight, so avg24h equals the current score), the previous day the rest. One decimal.
 */
export function avg24h(current: number, previous: number | null, hours: number): number {
  if (hours >= 24 || previous === null) return r1(current);
  return r1((hours * current + (24 - hours) * previous) / 24);
}

/** A row of stability_index_daily.sql: a history row (wire names) with the reading's market cap and contributors. */
type PsiRow = z.infer<typeof PsiDetailRowSchema> & { total_mcap_usd: number | null; contributors_json: string };

/** `site-data/stability-index.json` — the daily stability index (pipelines/analytics/stability-index.ts). */
export const stabilityIndexArtifact = sqlArtifact(import.meta.url, {
  key: "stability-index",
  schemaVersion: "1.0.0",
  maxAgeSec: 3600,
  description: "Daily stability index readings with components and contributors.",
  path: "site-data/stability-index.json",
  schema: StabilityIndexFileSchema,
  servedSchema: StabilityIndexStoredSchema,
  sql: "stability_index_daily",
  shape: "many",
  // the current reading (bands, the 24 h average at as-of) and the methodology are computed in TS
  transform: (rows: PsiRow[], ctx) => {
    const history = rows.map(({ total_mcap_usd, contributors_json, ...h }) => h);
    const last = rows.at(-1);
    const day = lastDay(ctx.asOf);
    let current: z.infer<typeof PsiCurrentSchema> | null = null;
    if (last && last.date === day && last.score !== null) {
      const score = last.score;
      const prev = rows.length > 1 ? rows[rows.length - 2].score : null;
      const avg = avg24h(score, prev, (Math.min(day + 86400, ctx.asOf) - day) / 3600);
      current = {
        score,
        band: psiBand(score),
        avg24h: avg,
        avg24hBand: psiBand(avg),
        components: last.components,
        contributors: JSON.parse(last.contributors_json),
        totalMcapUsd: last.total_mcap_usd ?? 0,
        computedAt: Math.min(day + 86400, ctx.asOf),
        methodologyVersion: last.methodologyVersion,
      };
    }
    return { current, history, methodology: methodology(PSI_VERSION, PSI_LABEL, ctx.asOf) };
  },
  dataAsOf: (_payload, ctx) => ctx.sourceObservedAt["defillama.stablecoins"] ?? null,
});
