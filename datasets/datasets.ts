import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { BlacklistEventSchema } from "../site-data/blacklist.ts";
import { type Dataset, derived, fromColumn } from "./contract.ts";

const sql = (name: string) => readFileSync(join(dirname(fileURLToPath(import.meta.url)), `${name}.sql`), "utf8");

/** Row of `top-stablecoins`: USD price and supply; `chains` is `;`-joined DefiLlama chain labels. */
export const TopStablecoinRowSchema = z.object({
  id: fromColumn(z.string(), "stablecoins", "stablecoin_id"),
  symbol: fromColumn(z.string(), "stablecoins", "symbol"),
  name: fromColumn(z.string(), "stablecoins", "name"),
  pegType: fromColumn(z.string(), "stablecoins", "peg_type"),
  pegMechanism: fromColumn(z.string(), "stablecoins", "peg_mechanism"),
  price: fromColumn(z.number().nullable(), "stablecoins", "price"),
  circulatingUsd: fromColumn(z.number().nullable(), "stablecoins", "circulating_usd"),
  chainCount: fromColumn(z.number().int(), "stablecoins", "chain_count"),
  chains: derived(
    z.string(),
    ["stablecoins.chains_json"],
    "DefiLlama chain labels the coin circulates on, `;`-joined (stablecoins.chains_json)",
  ),
});

/** Row of `stablecoin-cemetery`: registry coins dead at the as-of. */
export const CemeteryRowSchema = z.object({
  id: fromColumn(z.string(), "registry_coins", "id"),
  name: fromColumn(z.string(), "registry_coins", "name"),
  symbol: fromColumn(z.string(), "registry_coins", "symbol"),
  llamaId: fromColumn(z.string().nullable(), "registry_coins", "llama_id"),
  pegCurrency: fromColumn(z.string(), "registry_coins", "peg_currency"),
  causeOfDeath: fromColumn(z.string().nullable(), "registry_coins", "cause_of_death"),
  deathDate: fromColumn(z.string().nullable(), "registry_coins", "dead_from"),
});

/** Row of `depeg-history` (spec: id as string; ISO times UTC; durations s; prices USD). */
export const DepegHistoryRowSchema = z.object({
  id: derived(
    z.string(),
    ["depeg_events.id"],
    "Depeg incident id (depeg_events.id; numeric in the runtime API, a decimal string here)",
  ),
  stablecoinId: fromColumn(z.string(), "depeg_events", "stablecoin_id"),
  symbol: fromColumn(z.string(), "depeg_events", "symbol"),
  direction: fromColumn(z.enum(["above", "below"]), "depeg_events", "direction"),
  peakDeviationBps: fromColumn(z.number().int(), "depeg_events", "peak_deviation_bps"),
  startedAtISO: derived(
    z.string(),
    ["depeg_events.started_at"],
    "Start of the incident, ISO 8601 UTC (depeg_events.started_at)",
    "ISO 8601 UTC",
  ),
  endedAtISO: derived(
    z.string().nullable(),
    ["depeg_events.ended_at"],
    "End of the incident, ISO 8601 UTC; null while open (depeg_events.ended_at)",
    "ISO 8601 UTC",
  ),
  durationSec: derived(
    z.number().int().nullable(),
    ["depeg_events.started_at", "depeg_events.ended_at"],
    "Duration in seconds, ended_at − started_at; null while open",
    "seconds",
  ),
  startPrice: fromColumn(z.number(), "depeg_events", "start_price"),
  peakPrice: fromColumn(z.number().nullable(), "depeg_events", "peak_price"),
  recoveryPrice: fromColumn(z.number().nullable(), "depeg_events", "recovery_price"),
  pegReference: fromColumn(z.number(), "depeg_events", "peg_reference"),
  source: fromColumn(z.enum(["live", "backfill"]), "depeg_events", "source"),
});

/** Row of `contracts`: one curated deployment (chain id = registry chain slug; decimals of the token contract). */
export const ContractRowSchema = z.object({
  stablecoinId: fromColumn(z.string(), "registry_coins", "id"),
  symbol: fromColumn(z.string(), "registry_coins", "symbol"),
  chainId: derived(
    z.string(),
    ["registry_coins.contracts_json"],
    "Registry chain slug of the deployment (ethereum, tron, …; `chain` of registry_coins.contracts_json)",
  ),
  address: derived(
    z.string(),
    ["registry_coins.contracts_json"],
    "Token contract address (`address` of registry_coins.contracts_json)",
  ),
  decimals: derived(
    z.number().int().nonnegative(),
    ["registry_coins.contracts_json"],
    "Decimals of the token contract, base units per token = 10^decimals (`decimals` of registry_coins.contracts_json)",
  ),
});

/** Field `source_quality_daily`.`column` of a `source-quality` row. */
const sq = <T extends z.ZodType>(schema: T, column: string) => fromColumn(schema, "source_quality_daily", column);

/**
 * Row of `source-quality`: one coin and UTC day of the price consensus. Source lists are `+`-joined
 * labels; `rejectedBySourceAndRule` is JSON `{source: {rule: count}}`; prices USD.
 */
export const SourceQualityRowSchema = z.object({
  stablecoinId: sq(z.string(), "stablecoin_id"),
  date: sq(z.string().regex(/^\d{4}-\d{2}-\d{2}$/), "date"),
  judged: sq(z.boolean(), "judged"),
  slots: sq(z.number().int(), "slots"),
  sourcesQuoted: sq(z.string(), "sources_quoted"),
  familiesQuoted: sq(z.string(), "families_quoted"),
  disagreeingSources: sq(z.string(), "disagreeing_sources"),
  stuckSources: sq(z.string(), "stuck_sources"),
  rejectedQuotes: sq(z.number().int(), "rejected_quotes"),
  rejectedBySourceAndRule: sq(z.string(), "rejected_json"),
  consensusLow: sq(z.number().nullable(), "consensus_low"),
  consensusHigh: sq(z.number().nullable(), "consensus_high"),
  highConfidenceSlots: sq(z.number().int(), "high_confidence_slots"),
});

const B = BlacklistEventSchema.shape;
/** Field `blacklist_events`.`column` of a `freeze-events` row. */
const fe = <T extends z.ZodType>(schema: T, column: string) => fromColumn(schema, "blacklist_events", column);

/**
 * Row of `freeze-events`: BlacklistEvent columns (spec 2.5) with amounts as exact decimal strings
 * (`amountNative` token units, `amountRaw` base units; null when unknown), USD at event time, Unix s.
 */
export const FreezeEventRowSchema = BlacklistEventSchema.omit({
  suppressionReason: true,
  explorerTxUrl: true,
  explorerAddressUrl: true,
  decimals: true,
  origin: true,
}).extend({
  id: fe(B.id, "id"),
  stablecoin: fe(B.stablecoin, "symbol"),
  stablecoinId: fe(B.stablecoinId, "stablecoin_id"),
  chainId: fe(B.chainId, "chain_id"),
  chainName: fe(B.chainName, "chain_name"),
  eventType: fe(B.eventType, "event_type"),
  address: fe(B.address, "address"),
  amountNative: fe(
    z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .nullable(),
    "amount_decimal",
  ),
  amountRaw: derived(
    z.string().regex(/^\d+$/).nullable(),
    ["blacklist_events.amount_raw"],
    "Amount in base units (token units × 10^decimals) as an exact integer string; null when unknown",
    "base units",
  ),
  amountUsdAtEvent: fe(B.amountUsdAtEvent, "amount_usd_at_event"),
  amountSource: fe(z.string(), "amount_source"),
  amountStatus: fe(z.string(), "amount_status"),
  txHash: fe(B.txHash, "tx_hash"),
  blockNumber: fe(B.blockNumber, "block_number"),
  logIndex: fe(B.logIndex, "log_index"),
  timestamp: fe(B.timestamp, "ts"),
  methodologyVersion: fe(B.methodologyVersion, "methodology_version"),
  contractAddress: fe(B.contractAddress, "contract_address"),
  configKey: fe(B.configKey, "config_key"),
  eventSignature: fe(B.eventSignature, "event_signature"),
  eventTopic0: fe(B.eventTopic0, "topic0"),
  linkedFreezeEventId: fe(B.linkedFreezeEventId, "linked_freeze_event_id"),
  frozenDurationSec: fe(B.frozenDurationSec, "frozen_duration_sec"),
});

/**
 * Row of `scores-latest`: the latest scores of one listed coin (0-100; grades A+..F or NR; DEWS band
 * CALM..DANGER; null where the analytic has no value for the coin).
 */
export const ScoresLatestRowSchema = z.object({
  stablecoinId: fromColumn(z.string(), "stablecoins", "stablecoin_id"),
  symbol: fromColumn(z.string(), "stablecoins", "symbol"),
  pegScore: fromColumn(z.number().int().min(0).max(100).nullable(), "peg_scores", "peg_score"),
  safetyScore: fromColumn(z.number().int().min(0).max(100).nullable(), "report_cards", "safety_score"),
  safetyGrade: fromColumn(
    z.enum(["A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D", "F", "NR"]),
    "report_cards",
    "safety_grade",
  ),
  dewsScore: fromColumn(z.number().int().min(0).max(100).nullable(), "dews_daily", "score"),
  dewsBand: fromColumn(z.enum(["CALM", "WATCH", "ALERT", "WARNING", "DANGER"]).nullable(), "dews_daily", "band"),
  liquidityScore: derived(
    z.number().int().min(0).max(100).nullable(),
    [],
    "DEX liquidity score 0-100; null until DEX liquidity is published",
    "score 0-100",
  ),
  coverageClass: fromColumn(
    z.enum(["full", "limited-peg-history", "unrated", "defunct"]),
    "report_cards",
    "coverage_class",
  ),
});

const PRICES = ["defillama-history", "coingecko", "binance", "ecb"] as const;

/** Every published dataset. Adding a dataset = adding it here. */
export const DATASETS: Dataset[] = [
  {
    topic: "top-stablecoins",
    title: "Top stablecoins",
    dated: true,
    sheet: true,
    columns: Object.keys(TopStablecoinRowSchema.shape),
    primaryKey: ["id"],
    row: TopStablecoinRowSchema,
    sql: sql("top_stablecoins"),
    sources: ["defillama-stablecoins", "defillama-peggedassets", "pharos-watch", ...PRICES],
    methodologies: ["price-consensus", "supply-chain-guard"],
    description: "Every listed stablecoin with price, USD supply and chains, largest first.",
  },
  {
    topic: "stablecoin-cemetery",
    title: "Stablecoin cemetery",
    dated: false,
    sheet: false,
    columns: Object.keys(CemeteryRowSchema.shape),
    primaryKey: ["id"],
    row: CemeteryRowSchema,
    sql: sql("stablecoin_cemetery"),
    sources: ["pharos-watch", "defillama-peggedassets"],
    methodologies: [],
    description: "Dead stablecoins: cause and date of death (Pharos cemetery, DefiLlama deadFrom).",
  },
  {
    topic: "depeg-history",
    title: "Depeg history",
    dated: true,
    sheet: true,
    columns: Object.keys(DepegHistoryRowSchema.shape),
    primaryKey: ["id"],
    row: DepegHistoryRowSchema,
    sql: sql("depeg_history"),
    sources: [...PRICES, "defillama-stablecoins"],
    methodologies: ["depeg-detection", "price-consensus"],
    description:
      "Depeg incidents that started in the 90 days ending on the file date, newest first (ballast-depeg-v4).",
  },
  {
    topic: "contracts",
    title: "Stablecoin token contracts",
    dated: false,
    sheet: true,
    columns: Object.keys(ContractRowSchema.shape),
    primaryKey: ["stablecoinId", "chainId", "address"],
    row: ContractRowSchema,
    sql: sql("contracts"),
    sources: ["pharos-watch"],
    methodologies: [],
    description:
      "Curated token contracts of every registry coin (stablecoinId, symbol, chainId, address, decimals), to match coins by address.",
  },
  {
    topic: "source-quality",
    title: "Price source quality",
    dated: false,
    sheet: false,
    columns: Object.keys(SourceQualityRowSchema.shape),
    primaryKey: ["stablecoinId", "date"],
    row: SourceQualityRowSchema,
    sql: sql("source_quality"),
    sources: [...PRICES],
    methodologies: ["price-consensus", "source-lineage-check"],
    description:
      "Per coin and UTC day: sources quoted, sources outside the 50 bps agreement window, stuck sources, rejected quotes by rule (audit of every consensus price).",
  },
  {
    topic: "freeze-events",
    title: "Freeze and blacklist events",
    dated: true,
    sheet: true,
    columns: Object.keys(FreezeEventRowSchema.shape),
    primaryKey: ["id"],
    row: FreezeEventRowSchema,
    sql: sql("freeze_events"),
    sources: ["onchain-logs", "pharos-watch", "defillama-stablecoins", ...PRICES],
    methodologies: ["freeze-ledger"],
    description:
      "The whole freeze/blacklist ledger as of the file date, newest first (ballast-freeze-v2): amounts as exact decimal strings, USD at event time (the supply valuation rule of the event day), destroys linked to their freeze.",
  },
  {
    topic: "scores-latest",
    title: "Latest scores",
    dated: true,
    sheet: true,
    columns: Object.keys(ScoresLatestRowSchema.shape),
    primaryKey: ["stablecoinId"],
    row: ScoresLatestRowSchema,
    sql: sql("scores_latest"),
    sources: ["defillama-stablecoins", "pharos-watch", ...PRICES],
    methodologies: ["peg-score", "safety-score", "report-card", "stress-signals"],
    description:
      "Latest scores per listed coin, largest first: peg score, safety score and grade, DEWS score and band, liquidity score (null until DEX liquidity is published), coverage class.",
  },
];
