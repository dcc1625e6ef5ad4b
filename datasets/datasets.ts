import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { BlacklistEventSchema } from "../site-data/blacklist.ts";
import type { Dataset } from "./contract.ts";

const sql = (name: string) => readFileSync(join(dirname(fileURLToPath(import.meta.url)), `${name}.sql`), "utf8");

/** Row of `top-stablecoins`: USD price and supply; `chains` is `;`-joined DefiLlama chain labels. */
export const TopStablecoinRowSchema = z.object({
  id: z.string(),
  symbol: z.string(),
  name: z.string(),
  pegType: z.string(),
  pegMechanism: z.string(),
  price: z.number().nullable(),
  circulatingUsd: z.number().nullable(),
  chainCount: z.number().int(),
  chains: z.string(),
});

/** Row of `stablecoin-cemetery`. */
export const CemeteryRowSchema = z.object({
  id: z.string(),
  name: z.string(),
  symbol: z.string(),
  llamaId: z.string().nullable(),
  pegCurrency: z.string(),
  causeOfDeath: z.string().nullable(),
  deathDate: z.string().nullable(),
});

/** Row of `depeg-history` (spec: id as string; ISO times UTC; durations s; prices USD). */
export const DepegHistoryRowSchema = z.object({
  id: z.string(),
  stablecoinId: z.string(),
  symbol: z.string(),
  direction: z.enum(["above", "below"]),
  peakDeviationBps: z.number().int(),
  startedAtISO: z.string(),
  endedAtISO: z.string().nullable(),
  durationSec: z.number().int().nullable(),
  startPrice: z.number(),
  peakPrice: z.number().nullable(),
  recoveryPrice: z.number().nullable(),
  pegReference: z.number(),
  source: z.enum(["live", "backfill"]),
});

/** Row of `contracts`: one curated deployment (chain id = registry chain slug; decimals of the token contract). */
export const ContractRowSchema = z.object({
  stablecoinId: z.string(),
  symbol: z.string(),
  chainId: z.string(),
  address: z.string(),
  decimals: z.number().int().nonnegative(),
});

/**
 * Row of `source-quality`: one coin and UTC day of the price consensus. Source lists are `+`-joined
 * labels; `rejectedBySourceAndRule` is JSON `{source: {rule: count}}`; prices USD.
 */
export const SourceQualityRowSchema = z.object({
  stablecoinId: z.string(),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  judged: z.boolean(),
  slots: z.number().int(),
  sourcesQuoted: z.string(),
  familiesQuoted: z.string(),
  disagreeingSources: z.string(),
  stuckSources: z.string(),
  rejectedQuotes: z.number().int(),
  rejectedBySourceAndRule: z.string(),
  consensusLow: z.number().nullable(),
  consensusHigh: z.number().nullable(),
  highConfidenceSlots: z.number().int(),
});

/**
 * Row of `freeze-events`: BlacklistEvent columns (spec 2.5) with amounts as exact decimal strings
 * (`amountNative` token units, `amountRaw` base units; null when unknown), USD at event time, Unix s.
 */
export const FreezeEventRowSchema = BlacklistEventSchema.omit({ suppressionReason: true, explorerTxUrl: true, explorerAddressUrl: true, decimals: true, origin: true }).extend({
  amountNative: z.string().regex(/^\d+(\.\d+)?$/).nullable(),
  amountRaw: z.string().regex(/^\d+$/).nullable(),
  amountSource: z.string(),
  amountStatus: z.string(),
});

/**
 * Row of `scores-latest`: the latest scores of one listed coin (0-100; grades A+..F or NR; DEWS band
 * CALM..DANGER; null where the analytic has no value for the coin).
 */
export const ScoresLatestRowSchema = z.object({
  stablecoinId: z.string(),
  symbol: z.string(),
  pegScore: z.number().int().min(0).max(100).nullable(),
  safetyScore: z.number().int().min(0).max(100).nullable(),
  safetyGrade: z.enum(["A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D", "F", "NR"]),
  dewsScore: z.number().int().min(0).max(100).nullable(),
  dewsBand: z.enum(["CALM", "WATCH", "ALERT", "WARNING", "DANGER"]).nullable(),
  liquidityScore: z.number().int().min(0).max(100).nullable(),
  coverageClass: z.enum(["full", "limited-peg-history", "unrated", "defunct"]),
});

/** Every published dataset. Adding a dataset = adding it here. */
export const DATASETS: Dataset[] = [
  {
    topic: "top-stablecoins", dated: true, formats: ["csv", "json", "ndjson"], sheet: true,
    columns: Object.keys(TopStablecoinRowSchema.shape), row: TopStablecoinRowSchema, sql: sql("top_stablecoins"),
    description: "Every listed stablecoin with price, USD supply and chains, largest first.",
  },
  {
    topic: "stablecoin-cemetery", dated: false, formats: ["json", "csv"], sheet: false,
    columns: Object.keys(CemeteryRowSchema.shape), row: CemeteryRowSchema, sql: sql("stablecoin_cemetery"),
    description: "Dead stablecoins: cause and date of death (Pharos cemetery, DefiLlama deadFrom).",
  },
  {
    topic: "depeg-history", dated: true, formats: ["csv", "json", "ndjson"], sheet: true,
    columns: Object.keys(DepegHistoryRowSchema.shape), row: DepegHistoryRowSchema, sql: sql("depeg_history"),
    description: "Depeg incidents that started in the 90 days ending on the file date, newest first (ballast-depeg-v3).",
  },
  {
    topic: "contracts", dated: false, formats: ["csv", "json"], sheet: true,
    columns: Object.keys(ContractRowSchema.shape), row: ContractRowSchema, sql: sql("contracts"),
    description: "Curated token contracts of every registry coin (stablecoinId, symbol, chainId, address, decimals), to match coins by address.",
  },
  {
    topic: "source-quality", dated: false, formats: ["csv", "ndjson"], sheet: false,
    columns: Object.keys(SourceQualityRowSchema.shape), row: SourceQualityRowSchema, sql: sql("source_quality"),
    description: "Per coin and UTC day: sources quoted, sources outside the 50 bps agreement window, stuck sources, rejected quotes by rule (audit of every consensus price).",
  },
  {
    topic: "freeze-events", dated: true, formats: ["csv", "json", "ndjson"], sheet: true,
    columns: Object.keys(FreezeEventRowSchema.shape), row: FreezeEventRowSchema, sql: sql("freeze_events"),
    description: "The whole freeze/blacklist ledger as of the file date, newest first (ballast-freeze-v2): amounts as exact decimal strings, USD at event time (the supply valuation rule of the event day), destroys linked to their freeze.",
  },
  {
    topic: "scores-latest", dated: true, formats: ["csv", "json", "ndjson"], sheet: true,
    columns: Object.keys(ScoresLatestRowSchema.shape), row: ScoresLatestRowSchema, sql: sql("scores_latest"),
    description: "Latest scores per listed coin, largest first: peg score, safety score and grade, DEWS score and band, liquidity score (null until DEX liquidity is published), coverage class.",
  },
];
