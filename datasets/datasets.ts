import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { BlacklistEventSchema } from "../site-data/blacklist.ts";
import { type Dataset, doc } from "./contract.ts";

const sql = (name: string) => readFileSync(join(dirname(fileURLToPath(import.meta.url)), `${name}.sql`), "utf8");

/** Row of `top-stablecoins`: USD price and supply; `chains` is `;`-joined DefiLlama chain labels. */
export const TopStablecoinRowSchema = z.object({
  id: doc(z.string(), "Stablecoin id, `<ticker>-<issuer>` lowercase"),
  symbol: doc(z.string(), "Ticker symbol"),
  name: doc(z.string(), "Name"),
  pegType: doc(z.string(), "DefiLlama peg type, e.g. peggedUSD"),
  pegMechanism: doc(z.string(), "Peg mechanism (fiat-backed, crypto-backed, algorithmic)"),
  price: doc(z.number().nullable(), "Consensus price in USD at as-of; null when no usable quote", "USD"),
  circulatingUsd: doc(
    z.number().nullable(),
    "Circulating supply valued in USD (the supply valuation rule of /api/stablecoins)",
    "USD",
  ),
  chainCount: doc(z.number().int(), "Number of chains the coin circulates on"),
  chains: doc(z.string(), "DefiLlama chain labels, `;`-joined"),
});

/** Row of `stablecoin-cemetery`. */
export const CemeteryRowSchema = z.object({
  id: doc(z.string(), "Stablecoin id (Pharos cemetery id)"),
  name: doc(z.string(), "Name"),
  symbol: doc(z.string(), "Ticker symbol"),
  llamaId: doc(z.string().nullable(), "DefiLlama pegged-asset id; null when not listed there"),
  pegCurrency: doc(z.string(), "Currency of the peg (USD, EUR, …)"),
  causeOfDeath: doc(
    z.string().nullable(),
    "Cause of death (algorithmic-failure, counterparty-failure, abandoned, liquidity-drain, regulatory)",
  ),
  deathDate: doc(z.string().nullable(), "Date of death, ISO 8601 (precision as recorded)", "UTC day"),
});

/** Row of `depeg-history` (spec: id as string; ISO times UTC; durations s; prices USD). */
export const DepegHistoryRowSchema = z.object({
  id: doc(z.string(), "Depeg incident id (numeric in the runtime API, a string here)"),
  stablecoinId: doc(z.string(), "Stablecoin id"),
  symbol: doc(z.string(), "Ticker symbol"),
  direction: doc(z.enum(["above", "below"]), "Side of the peg the price left to (above, below)"),
  peakDeviationBps: doc(z.number().int(), "Largest deviation from the peg reference, in basis points", "bps"),
  startedAtISO: doc(z.string(), "Start of the incident, ISO 8601 UTC", "ISO 8601 UTC"),
  endedAtISO: doc(z.string().nullable(), "End of the incident, ISO 8601 UTC; null while open", "ISO 8601 UTC"),
  durationSec: doc(z.number().int().nullable(), "Duration in seconds; null while open", "seconds"),
  startPrice: doc(z.number(), "Price at the start, USD", "USD"),
  peakPrice: doc(z.number().nullable(), "Price at the peak deviation, USD", "USD"),
  recoveryPrice: doc(z.number().nullable(), "Price at recovery, USD; null while open", "USD"),
  pegReference: doc(z.number(), "Peg reference price in USD (1 for USD pegs; FX rate for other currencies)", "USD"),
  source: doc(z.enum(["live", "backfill"]), "live: detected by the monitor; backfill: from recorded history"),
});

/** Row of `contracts`: one curated deployment (chain id = registry chain slug; decimals of the token contract). */
export const ContractRowSchema = z.object({
  stablecoinId: doc(z.string(), "Stablecoin id"),
  symbol: doc(z.string(), "Ticker symbol"),
  chainId: doc(z.string(), "Registry chain slug (ethereum, tron, …)"),
  address: doc(z.string(), "Token contract address"),
  decimals: doc(z.number().int().nonnegative(), "Decimals of the token contract (base units per token = 10^decimals)"),
});

/**
 * Row of `source-quality`: one coin and UTC day of the price consensus. Source lists are `+`-joined
 * labels; `rejectedBySourceAndRule` is JSON `{source: {rule: count}}`; prices USD.
 */
export const SourceQualityRowSchema = z.object({
  stablecoinId: doc(z.string(), "Stablecoin id"),
  date: doc(z.string().regex(/^\d{4}-\d{2}-\d{2}$/), "UTC day of the consensus slots, YYYY-MM-DD", "UTC day"),
  judged: doc(z.boolean(), "Whether the day had a consensus to judge sources against"),
  slots: doc(z.number().int(), "Consensus slots of the day"),
  sourcesQuoted: doc(z.string(), "Sources that quoted a price, `+`-joined"),
  familiesQuoted: doc(z.string(), "Independent source families that quoted, `+`-joined"),
  disagreeingSources: doc(z.string(), "Sources outside the 50 bps agreement window of a slot's consensus, `+`-joined"),
  stuckSources: doc(z.string(), "Sources repeating a stale value, `+`-joined"),
  rejectedQuotes: doc(z.number().int(), "Quotes rejected by a quality rule"),
  rejectedBySourceAndRule: doc(z.string(), "JSON object {source: {rule: count}} of rejected quotes"),
  consensusLow: doc(z.number().nullable(), "Lowest consensus price of the day, USD", "USD"),
  consensusHigh: doc(z.number().nullable(), "Highest consensus price of the day, USD", "USD"),
  highConfidenceSlots: doc(z.number().int(), "Slots whose consensus had high confidence"),
});

const B = BlacklistEventSchema.shape;

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
  id: doc(B.id, "Event id"),
  stablecoin: doc(B.stablecoin, "Ticker symbol"),
  stablecoinId: doc(B.stablecoinId, "Stablecoin id"),
  chainId: doc(B.chainId, "Registry chain slug"),
  chainName: doc(B.chainName, "Chain name"),
  eventType: doc(B.eventType, "blacklist, unblacklist or destroy"),
  address: doc(B.address, "Frozen, unfrozen or wiped address"),
  amountNative: doc(
    z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .nullable(),
    "Amount in token units as an exact decimal string; null when unknown",
    "token units",
  ),
  amountRaw: doc(
    z.string().regex(/^\d+$/).nullable(),
    "Amount in base units (token units × 10^decimals) as an exact integer string; null when unknown",
    "base units",
  ),
  amountUsdAtEvent: doc(
    B.amountUsdAtEvent,
    "Amount in USD at event time (supply valuation rule of the event's UTC day); null when unknown",
    "USD",
  ),
  amountSource: doc(
    z.string(),
    "Where the amount comes from (event, historical_balance, current_balance_snapshot, derived, legacy_migration, unavailable)",
  ),
  amountStatus: doc(z.string(), "resolved, recoverable_pending, permanently_unavailable, provider_failed or ambiguous"),
  txHash: doc(B.txHash, "Transaction hash"),
  blockNumber: doc(B.blockNumber, "Block number"),
  logIndex: doc(B.logIndex, "Log index within the block"),
  timestamp: doc(B.timestamp, "Block time in Unix seconds", "Unix seconds"),
  methodologyVersion: doc(B.methodologyVersion, "Freeze-ledger methodology version of the row"),
  contractAddress: doc(B.contractAddress, "Token contract that emitted the event"),
  configKey: doc(B.configKey, "Tracked-contract config entry that matched"),
  eventSignature: doc(B.eventSignature, "Solidity event signature"),
  eventTopic0: doc(B.eventTopic0, "keccak256 topic0 of the event"),
  linkedFreezeEventId: doc(B.linkedFreezeEventId, "For a destroy: id of the freeze that made it possible"),
  frozenDurationSec: doc(B.frozenDurationSec, "For a destroy: seconds between freeze and destroy", "seconds"),
});

/**
 * Row of `scores-latest`: the latest scores of one listed coin (0-100; grades A+..F or NR; DEWS band
 * CALM..DANGER; null where the analytic has no value for the coin).
 */
export const ScoresLatestRowSchema = z.object({
  stablecoinId: doc(z.string(), "Stablecoin id"),
  symbol: doc(z.string(), "Ticker symbol"),
  pegScore: doc(z.number().int().min(0).max(100).nullable(), "Peg score 0-100 (ballast-peg-score)", "score 0-100"),
  safetyScore: doc(z.number().int().min(0).max(100).nullable(), "Safety score 0-100", "score 0-100"),
  safetyGrade: doc(
    z.enum(["A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D", "F", "NR"]),
    "Safety grade A+..F, NR when not rated",
  ),
  dewsScore: doc(
    z.number().int().min(0).max(100).nullable(),
    "Depeg early-warning score 0-100 of the newest DEWS day",
    "score 0-100",
  ),
  dewsBand: doc(z.enum(["CALM", "WATCH", "ALERT", "WARNING", "DANGER"]).nullable(), "DEWS band CALM..DANGER"),
  liquidityScore: doc(
    z.number().int().min(0).max(100).nullable(),
    "DEX liquidity score 0-100; null until DEX liquidity is published",
    "score 0-100",
  ),
  coverageClass: doc(
    z.enum(["full", "limited-peg-history", "unrated", "defunct"]),
    "Coverage class: full, limited-peg-history, unrated, defunct",
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
