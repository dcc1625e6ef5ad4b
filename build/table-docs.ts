import type { FieldDoc, FieldUnit } from "../datasets/contract.ts";
import { fieldDocsOf } from "../datasets/contract.ts";
import { DATASETS } from "../datasets/datasets.ts";
import { METHODOLOGY_CHANGELOGS } from "../pipelines/analytics/changelogs.ts";

/**
 * Documentation of one table of the researchers' `ballast.duckdb`: the one declaration its
 * `COMMENT ON TABLE` is generated from (grain, source, methodology versions in force).
 */
export interface TableDoc {
  /** What a row is about, one sentence. */
  summary: string;
  /** One row per … (the model's `-- grain:` line). */
  grain: string;
  /** Upstream(s) the rows derive from. */
  source: string;
  /** Analytics (`pipelines/analytics/changelogs/<analytic>.md`) whose version ids the rows follow. */
  methodology?: string[];
  /**
   * A dataset topic publishing the same rows: column → dataset field whose documentation (the
   * datapackage's field description) is the column's comment, so the two never disagree.
   */
  dataset?: { topic: string; fields: Record<string, string> };
}

const DL = "DefiLlama stablecoins API (recorded captures)";
const PRICES = "price sources (DefiLlama, CoinGecko, Binance, ECB reference) per spec 2.3";
const CHAIN = "on-chain logs of tracked contracts (pipelines/onchain)";
const REG = "Ballast registry (pipelines/registry/registry.json)";

/** Every table copied into `ballast.duckdb`, in publishing order, with its documentation. */
export const PUBLISHED_TABLE_DOCS: Record<string, TableDoc> = {
  registry_coins: {
    summary: "Reviewed stablecoin registry: identity, peg, contracts, death",
    grain: "one row per id",
    source: REG,
  },
  registry_chains: { summary: "Reviewed chain registry with tiers", grain: "one row per id", source: REG },
  stablecoins: {
    summary: "Current state of every coin of the current universe (the /api/stablecoins list)",
    grain: "one row per stablecoin_id",
    source: `${DL}; ${PRICES}`,
    methodology: ["price-consensus", "supply-valuation"],
  },
  stablecoin_chain_supply: {
    summary: "Per-chain supply of every current coin, USD",
    grain: "one row per stablecoin_id, chain_id",
    source: DL,
    methodology: ["supply-valuation", "supply-chain-guard"],
  },
  chain_supply: { summary: "Chain aggregates of the current coins' supply", grain: "one row per chain_id", source: DL },
  chain_health: {
    summary: "Chain health scores 0-100",
    grain: "one row per chain_id",
    source: DL,
    methodology: ["chain-health"],
  },
  supply_history_daily: {
    summary: "Daily supply per coin, native units and USD",
    grain: "one row per stablecoin_id, date (UTC day)",
    source: DL,
    methodology: ["supply-valuation"],
  },
  total_supply_daily: {
    summary: "Aggregate supply chart per peg type (ballast-listed universe and DefiLlama all-chain totals)",
    grain: "one row per date (UTC day), aggregate_universe, peg_type",
    source: DL,
    methodology: ["supply-valuation"],
  },
  non_usd_share_daily: {
    summary: "Share of non-USD peg groups in listed supply",
    grain: "one row per date (UTC day)",
    source: DL,
    methodology: ["supply-valuation"],
  },
  fx_rates_daily: {
    summary: "FX reference: USD per unit of each currency",
    grain: "one row per date, currency",
    source: "Frankfurter (ECB reference rates)",
  },
  price_history_daily: {
    summary: "Daily price history per source",
    grain: "one row per source, gecko_id, date",
    source: PRICES,
  },
  chain_supply_samples: {
    summary: "On-chain totalSupply() samples, native units",
    grain: "one row per chain_id, contract_address, block_number",
    source: "on-chain totalSupply() reads",
  },
  depeg_events: {
    summary: "Public depeg incidents (spec 2.6)",
    grain: "one row per id",
    source: PRICES,
    methodology: ["depeg-detection", "depeg-resolver"],
  },
  depeg_pending: {
    summary: "Depeg candidates awaiting confirmation",
    grain: "one row per stablecoin_id, direction",
    source: PRICES,
    methodology: ["depeg-detection"],
  },
  tape_events: {
    summary: "Chronological tape of depeg and freeze events (/api/events)",
    grain: "one row per id",
    source: `${PRICES}; ${CHAIN}`,
    methodology: ["depeg-detection", "freeze-ledger"],
  },
  peg_scores: {
    summary: "Peg scores per coin",
    grain: "one row per stablecoin_id",
    source: PRICES,
    methodology: ["peg-score"],
  },
  price_consensus_slots: {
    summary: "Consensus price per coin and slot",
    grain: "one row per stablecoin_id, slot_ts",
    source: PRICES,
    methodology: ["price-consensus"],
  },
  price_observation_rejections: {
    summary: "Price quotes refused by a quality rule",
    grain: "one row per stablecoin_id, source, ts, reason",
    source: PRICES,
    methodology: ["price-consensus"],
  },
  supply_value_rejections: {
    summary: "Supply values refused by a plausibility rule",
    grain: "one row per stablecoin_id, date, source, chain_id",
    source: DL,
    methodology: ["supply-valuation"],
  },
  supply_chain_guard: {
    summary: "Coins quarantined by the supply-chain guard",
    grain: "one row per quarantined stablecoin_id",
    source: DL,
    methodology: ["supply-chain-guard"],
  },
  listed_supply_daily: {
    summary: "The listed universe per day with each coin's supply",
    grain: "one row per stablecoin_id, date",
    source: DL,
    methodology: ["supply-valuation"],
  },
  source_quality_daily: {
    summary: "Per coin and UTC day, the audit of the price sources behind the consensus",
    grain: "one row per stablecoin_id, date",
    source: PRICES,
    methodology: ["price-consensus"],
    dataset: {
      topic: "source-quality",
      fields: {
        stablecoin_id: "stablecoinId",
        date: "date",
        judged: "judged",
        slots: "slots",
        sources_quoted: "sourcesQuoted",
        families_quoted: "familiesQuoted",
        disagreeing_sources: "disagreeingSources",
        stuck_sources: "stuckSources",
        rejected_quotes: "rejectedQuotes",
        rejected_json: "rejectedBySourceAndRule",
        consensus_low: "consensusLow",
        consensus_high: "consensusHigh",
        high_confidence_slots: "highConfidenceSlots",
      },
    },
  },
  source_lineage_check: {
    summary: "Whether two price sources copy each other, per coin and year",
    grain: "one row per source_a, source_b, gecko_id, year",
    source: PRICES,
    methodology: ["source-lineage-check"],
  },
  blacklist_events: {
    summary: "Freeze/blacklist ledger (spec 2.5): blacklist, unblacklist and destroy events, valued at event time",
    grain: "one row per id",
    source: CHAIN,
    methodology: ["freeze-ledger"],
    dataset: {
      topic: "freeze-events",
      fields: {
        id: "id",
        stablecoin_id: "stablecoinId",
        chain_id: "chainId",
        chain_name: "chainName",
        event_type: "eventType",
        address: "address",
        amount_decimal: "amountNative",
        amount_usd_at_event: "amountUsdAtEvent",
        amount_source: "amountSource",
        amount_status: "amountStatus",
        tx_hash: "txHash",
        methodology_version: "methodologyVersion",
      },
    },
  },
  mint_burn_events: {
    summary: "Classified mint/burn events of tracked supply contracts",
    grain: "one row per id",
    source: CHAIN,
    methodology: ["mint-burn"],
  },
  mint_burn_hourly: {
    summary: "Hourly mint/burn aggregates per coin",
    grain: "one row per stablecoin_id, hour_ts",
    source: CHAIN,
    methodology: ["mint-burn"],
  },
  mint_burn_daily: {
    summary: "Daily (UTC) mint/burn aggregates per coin",
    grain: "one row per stablecoin_id, date",
    source: CHAIN,
    methodology: ["mint-burn"],
  },
  bluechip_ratings: {
    summary: "Bluechip ratings joined to registry ids",
    grain: "one row per slug",
    source: "Bluechip ratings (recorded captures)",
  },
  usds_status: { summary: "Sky USDS freeze-module probe", grain: "at most one row", source: "on-chain eth_call probe" },
  report_cards: {
    summary: "Safety scores and report cards per coin",
    grain: "one row per stablecoin_id",
    source: `${REG}; ${DL}; ${PRICES}`,
    methodology: ["safety-score", "report-card"],
  },
  safety_score_history: {
    summary: "Safety score publications per coin and day",
    grain: "one row per stablecoin_id, date",
    source: REG,
    methodology: ["safety-score"],
  },
  dependency_edges: {
    summary: "Backing dependencies between coins",
    grain: "one row per from_id, to_id, type",
    source: REG,
  },
  stability_index_daily: {
    summary: "Peg stability index of the market",
    grain: "one row per date",
    source: `${PRICES}; ${DL}`,
    methodology: ["stability-index"],
  },
  dews_daily: {
    summary: "Depeg early-warning stress signal per coin",
    grain: "one row per stablecoin_id, date",
    source: `${PRICES}; ${DL}`,
    methodology: ["stress-signals"],
  },
  redemption_backstops: {
    summary: "Redemption backstop scores per coin",
    grain: "one row per stablecoin_id",
    source: REG,
    methodology: ["redemption-backstops"],
  },
  yield_pools: {
    summary: "Yield pools of the newest DefiLlama /pools capture",
    grain: "one row per pool_id",
    source: "DefiLlama yields API",
    methodology: ["yield-rankings"],
  },
  pool_coin_matches: {
    summary: "Pool tokens matched to registry coins",
    grain: "one row per pool_id, token_index",
    source: "DefiLlama yields API",
    methodology: ["yield-rankings"],
  },
  yield_single_asset_pools: {
    summary: "Single-token pools matched to one registry coin",
    grain: "one row per pool_id",
    source: "DefiLlama yields API",
    methodology: ["yield-rankings"],
  },
  dex_liquidity: {
    summary: "DEX liquidity scores per coin",
    grain: "one row per stablecoin_id",
    source: "DefiLlama yields API",
    methodology: ["dex-liquidity"],
  },
  dex_liquidity_daily: {
    summary: "DEX liquidity per coin and day",
    grain: "one row per date, stablecoin_id",
    source: "DefiLlama yields API",
    methodology: ["dex-liquidity"],
  },
};

/** Tables copied into the researchers' `ballast.duckdb`, in order. */
export const PUBLISHED_TABLES = Object.keys(PUBLISHED_TABLE_DOCS);

/** Column names that mean the same in every published table. */
const COLUMN_DOCS: Record<string, FieldDoc> = {
  stablecoin_id: { description: "Ballast stablecoin id (registry_coins.id)" },
  chain_id: { description: "Ballast chain id (registry_chains.id)" },
  date: { description: "UTC day, YYYY-MM-DD (daily buckets start 00:00 UTC)", unit: "UTC day" },
  symbol: { description: "Token symbol" },
  name: { description: "Display name" },
  gecko_id: { description: "CoinGecko coin id" },
  methodology_version: {
    description: "Methodology version id the row was computed with (changelog under /methodology/)",
  },
  peg_type: { description: "DefiLlama peg type, e.g. peggedUSD" },
  peg_currency: { description: "ISO currency (or commodity) the coin is pegged to" },
  observed_at: { description: "When the upstream capture was observed, Unix seconds", unit: "Unix seconds" },
  ts: { description: "Event time, Unix seconds", unit: "Unix seconds" },
  circulating_usd: { description: "Circulating supply valued in USD", unit: "USD" },
  block_number: { description: "Block number of the chain" },
  chain_name: { description: "Chain display name (registry_chains.name)" },
  decimals: { description: "Token decimals: native units = base units / 10^decimals" },
  tx_hash: { description: "Transaction hash" },
  log_index: { description: "Log index of the event within its block" },
  contract_address: { description: "Token contract address on the chain" },
  valuation_basis: {
    description: "Which supply valuation rule priced the row (pipelines/analytics/changelogs/supply-valuation.md)",
  },
  usd_per_native: { description: "USD per native token unit used to value the row", unit: "USD" },
  is_dead: { description: "True when the registry marks the coin dead (boolean)" },
  unreviewed: { description: "True when the registry entry is not yet reviewed (boolean)" },
  price_confidence: { description: "Confidence of the consensus price: high, single-source, low or fallback" },
  peg_reference: { description: "Peg reference value in USD the deviation is measured against", unit: "USD" },
  deviation_bps: { description: "Deviation from the peg reference, basis points (negative below peg)", unit: "bps" },
};

const SUFFIX_UNITS: [RegExp, FieldUnit | undefined, string][] = [
  [/_usd$|^price$|_usd_/, "USD", "USD"],
  [/_bps$/, "bps", "basis points"],
  [/(_at|_ts|_since|^ts)$/, "Unix seconds", "Unix seconds"],
  [/_sec$/, "seconds", "seconds"],
  [/_raw$/, "base units", "token base units"],
  [/_native$/, "token units", "token units"],
  [/score$/, "score 0-100", "score 0-100"],
  [/_date$|^date$|_day$/, "UTC day", "UTC day"],
];

/** Description derived from a column name (`amount_usd` → "Amount usd, USD"), for columns without an entry. */
function derivedDoc(column: string): FieldDoc {
  const words = column.replace(/_json$/, "").replace(/_/g, " ");
  const text = words.charAt(0).toUpperCase() + words.slice(1);
  const kind = column.endsWith("_json") ? " (JSON text)" : column.startsWith("is_") ? " (boolean)" : "";
  const hit = SUFFIX_UNITS.find(([re]) => re.test(column));
  return { description: `${text}${kind}${hit ? `, ${hit[2]}` : ""}`, ...(hit?.[1] ? { unit: hit[1] } : {}) };
}

/**
 * The documentation of `table`.`column`: the linked dataset's field doc (exactly the datapackage
 * description), else the shared column glossary, else a description derived from the name with its unit.
 * Throws naming the table when it is not published or a linked dataset field does not exist.
 */
export function columnDocOf(table: string, column: string): FieldDoc {
  const t = PUBLISHED_TABLE_DOCS[table];
  if (!t) throw new Error(`table ${table} is not published (build/table-docs.ts)`);
  const field = t.dataset?.fields[column];
  if (t.dataset && field) {
    const topic = t.dataset.topic;
    const ds = DATASETS.find((d) => d.topic === topic);
    const f = ds && fieldDocsOf(ds).find((x) => x.name === field);
    if (!f) throw new Error(`table ${table}: dataset ${topic} has no field ${field}`);
    return { description: f.description, ...(f.unit ? { unit: f.unit } : {}) };
  }
  return COLUMN_DOCS[column] ?? derivedDoc(column);
}

/**
 * `COMMENT ON TABLE` text of `table`: summary, grain, source and the methodology version ids in force
 * (pipelines/analytics/changelogs.ts). Deterministic: a function of the code only.
 */
export function tableCommentOf(table: string): string {
  const t = PUBLISHED_TABLE_DOCS[table];
  if (!t) throw new Error(`table ${table} is not published (build/table-docs.ts)`);
  const versions = (t.methodology ?? []).flatMap((a) => {
    const ids = METHODOLOGY_CHANGELOGS.filter((c) => c.analytic === a).map((c) => c.versionId);
    if (!ids.length) throw new Error(`table ${table}: methodology ${a} has no changelog`);
    return ids;
  });
  return `${t.summary}. Grain: ${t.grain}. Source: ${t.source}. Methodology: ${versions.length ? versions.join(", ") : "none"}.`;
}

/** SQL quoting of a string literal. */
const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** The `COMMENT ON TABLE/COLUMN` statements documenting `table` (schema `schema`) with columns `columns`. */
export function commentStatements(schema: string, table: string, columns: string[]): string[] {
  return [
    `comment on table ${schema}.${table} is ${lit(tableCommentOf(table))}`,
    ...columns.map((c) => `comment on column ${schema}.${table}."${c}" is ${lit(columnDocOf(table, c).description)}`),
  ];
}

/** Markers around the generated table list in README.md ("Query the published DuckDB file"). */
export const README_TABLES_START =
  "<!-- duckdb-tables:start (generated by `npm run readme-duckdb` from build/table-docs.ts) -->";
export const README_TABLES_END = "<!-- duckdb-tables:end -->";

/** The README's table list of `ballast.duckdb`: one markdown row per published table (name, grain, summary, methodology). */
export function readmeTableList(): string {
  const rows = PUBLISHED_TABLES.map((t) => {
    const d = PUBLISHED_TABLE_DOCS[t];
    return `| \`${t}\` | ${d.grain} | ${d.summary} | ${(d.methodology ?? []).join(", ") || "none"} |`;
  });
  return ["| Table | Grain | What | Methodology |", "| --- | --- | --- | --- |", ...rows].join("\n");
}

/** `readme` with the text between the table-list markers replaced by {@link readmeTableList}; throws when a marker is missing. */
export function withReadmeTableList(readme: string): string {
  const a = readme.indexOf(README_TABLES_START);
  const b = readme.indexOf(README_TABLES_END);
  if (a < 0 || b < a) throw new Error("README.md lacks the duckdb-tables markers");
  return `${readme.slice(0, a + README_TABLES_START.length)}\n${readmeTableList()}\n${readme.slice(b)}`;
}
