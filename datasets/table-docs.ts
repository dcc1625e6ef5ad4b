import type { FieldDoc, FieldUnit } from "./contract.ts";
import { METHODOLOGY_CHANGELOGS } from "../pipelines/analytics/changelogs.ts";

/**
 * One column's declared documentation: the text alone, or text and unit. The text states meaning,
 * unit and, where it differs from the table's, source; it is the column's `COMMENT ON COLUMN` and the
 * description of every dataset field copied from the column (datasets/datasets.ts `fromColumn`).
 */
export type ColumnDecl = string | FieldDoc;

/**
 * Documentation of one table of the researchers' `ballast.duckdb`: the one declaration its
 * `COMMENT ON TABLE` and `COMMENT ON COLUMN`s are generated from (grain, source, methodology versions
 * in force, every column's meaning and unit).
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
   * The table's own columns (column → declaration). A column absent here takes the shared
   * {@link SHARED_COLUMN_DOCS} entry of its name; a column in neither is undocumented and
   * {@link columnDocOf} throws.
   */
  columns: Record<string, ColumnDecl>;
}

/** A declaration with a unit (the text says the unit too). */
const unit =
  (u: FieldUnit) =>
  (description: string): FieldDoc => ({ description, unit: u });
const usd = unit("USD");
const bps = unit("bps");
const unix = unit("Unix seconds");
const secs = unit("seconds");
const tok = unit("token units");
const base = unit("base units");
const score = unit("score 0-100");
const day = unit("UTC day");
const ratio = unit("ratio 0-1");
const pct = unit("percent 0-100");
const days = unit("days");

const DL = "DefiLlama stablecoins API (recorded captures)";
const PRICES = "price sources (DefiLlama, CoinGecko, Binance, ECB reference) per spec 2.3";
const CHAIN = "on-chain logs of tracked contracts (pipelines/onchain)";
const REG = "Ballast registry (pipelines/registry/registry.json)";
const YIELDS = "DefiLlama yields API";

/** Every table copied into `ballast.duckdb`, in publishing order, with its documentation. */
export const PUBLISHED_TABLE_DOCS: Record<string, TableDoc> = {
  registry_coins: {
    summary: "Reviewed stablecoin registry: identity, peg, contracts, death",
    grain: "one row per id",
    source: REG,
    columns: {
      id: "Ballast stablecoin id, `<ticker>-<issuer>` lowercase; the key every other table's stablecoin_id refers to",
      llama_id: "DefiLlama pegged-asset id; null when DefiLlama does not list the coin",
      issuer: "Issuer or protocol behind the coin, as curated in the registry",
      nav_token:
        "True for a yield-accruing NAV token: its price follows a rising NAV, not par; never judged against par",
      floating_peg: "True for a floating peg (CPI-indexed or redemption-rate target); no depeg judging",
      dead_from: day(
        "Start of the death period, ISO 8601 date at the precision recorded (YYYY, YYYY-MM or YYYY-MM-DD); null until the death is known at the as-of",
      ),
      cause_of_death:
        "Cause of death (algorithmic-failure, counterparty-failure, abandoned, liquidity-drain, regulatory); null while alive",
      death_known_on: day(
        "UTC day (YYYY-MM-DD) from which the death counts as known: the end of the recorded death period",
      ),
      exchange_symbols_json: "JSON array of the coin's symbols on the exchanges we read (e.g. Binance USDC)",
      risk_json:
        "JSON object of curated risk facts (backing, custody, governance …) the safety score reads; null when not curated",
      redemption_json:
        "JSON object of curated redemption-route facts the redemption backstop reads; null when not curated",
      reserves_json: "JSON object of the reserve composition from the Pharos core extract; null when it has none",
      peak_mcap_usd: usd(
        "Peak market cap of a dead coin in USD, from the Pharos cemetery; null for live coins (stability index fallback)",
      ),
    },
  },
  registry_chains: {
    summary: "Reviewed chain registry with tiers",
    grain: "one row per id",
    source: REG,
    columns: {
      id: "Ballast chain id (lowercase slug, e.g. ethereum); the key every chain_id refers to",
      tier: "Curated chain tier: ethereum, stage1-l2, mature-alt-l1, established-alt-l1 or unproven; null when not curated",
      tier_source: "Evidence for the tier (e.g. L2BEAT stage, curated vocabulary); null when the chain has no tier",
    },
  },
  stablecoins: {
    summary: "Current state of every coin of the current universe (the /api/stablecoins list)",
    grain: "one row per stablecoin_id",
    source: `${DL}; ${PRICES}`,
    methodology: ["price-consensus", "supply-valuation"],
    columns: {
      price: usd("Consensus price in USD at as-of; null when no usable quote (see price_unavailable_reason)"),
      price_source: "Source label(s) of the consensus price, `+`-joined (e.g. coingecko+defillama-prices)",
      consensus_sources_json: "JSON array of the sources whose quotes entered the consensus",
      agree_sources_json: "JSON array of the sources within the agreement window of the consensus price",
      price_observed_at: unix("When the newest quote behind the price was observed, Unix seconds"),
      price_observed_at_mode:
        "How price_observed_at was known: upstream (the source's own quote time), local_fetch (our capture time) or unknown (mixed)",
      price_synced_at: unix("The build's as-of when a price is published, Unix seconds; null without a price"),
      price_unavailable_reason: "Why price is null (no-observation, stale-beyond-window, …); null when priced",
      supply_mode:
        "Where supply comes from: list (a DefiLlama list capture at or before as-of) or history (latest supply point ≤ 3 days old)",
      supply_source: "Upstream of the supply figure (spec supplySource, e.g. defillama); null when no supply",
      supply_date: day("UTC day of the supply figure"),
      supply_unavailable_reason: "Why circulating_usd is null; null when supplied",
      fx_rate_age_days: days(
        "Days between the FX rate's day and supply_date when the supply was valued at an FX rate; null otherwise",
      ),
      current_native: tok("Circulating supply at supply_date in native token units"),
      chains_json: "JSON array of the DefiLlama chain labels the coin circulates on",
      chain_count: "Number of chains the coin circulates on",
      supply_chain_guard_status:
        "Supply-chain guard status when the coin is quarantined (per-chain supply withheld); null otherwise",
      supply_chain_guard_since: unix(
        "Since when the coin is quarantined by the supply-chain guard, Unix seconds; null when not",
      ),
      supply_chain_guard_chains_json:
        "JSON array of the chains that tripped the supply-chain guard; null when not quarantined",
    },
  },
  stablecoin_chain_supply: {
    summary: "Per-chain supply of every current coin, USD",
    grain: "one row per stablecoin_id, chain_id",
    source: DL,
    methodology: ["supply-valuation", "supply-chain-guard"],
    columns: {
      circulating_usd: usd("Circulating supply of the coin on the chain, USD (the coin's supply valuation rule)"),
      source: "Upstream of the chain figure: defillama-list, defillama-detail or coingecko-market-cap",
      date: day("UTC day of the chain figure"),
    },
  },
  chain_supply: {
    summary: "Chain aggregates of the current coins' supply",
    grain: "one row per chain_id",
    source: DL,
    columns: {
      circulating_usd: usd("Sum of the current coins' circulating supply on the chain, USD"),
      coin_count: "Number of current coins with supply on the chain",
      top_stablecoin_id: "The coin with the largest USD supply on the chain (registry_coins.id)",
      coin_hhi: ratio("Herfindahl-Hirschman index of the coins' supply shares on the chain, ratio 0-1 (1 = one coin)"),
      dominance_share: ratio("The chain's share of the global stablecoin supply, ratio 0-1"),
    },
  },
  chain_health: {
    summary: "Chain health scores 0-100",
    grain: "one row per chain_id",
    source: DL,
    methodology: ["chain-health"],
    columns: {
      health_score: score(
        "Health score 0-100 = 0.30 quality + 0.20 chain_environment + 0.20 concentration + 0.20 peg_stability + 0.10 backing_diversity; null when quality is null",
      ),
      health_band: "Band of health_score: robust ≥ 80, healthy ≥ 60, mixed ≥ 40, fragile ≥ 20, concentrated < 20",
      quality: score(
        "Supply-weighted safety score of the rated coins on the chain, 0-100; null below 50% rated supply",
      ),
      chain_environment: score(
        "Curated chain tier as a score 0-100 (ethereum 100, stage1-l2 66, mature-alt-l1 45, established-alt-l1 20, unproven 0; 50 when untiered)",
      ),
      concentration: score("100 × (1 − HHI) of the coins' supply shares on the chain, 0-100 (one coin → 0)"),
      peg_stability: score("Supply-weighted max(0, 100 − |current deviation bps| / 5), 0-100; unjudged coins count 50"),
      backing_diversity: score("Shannon entropy of RWA- vs crypto-backed supply normalised by ln 2, as 0-100"),
      rated_share: ratio("Share of the chain's USD supply held by coins with a safety score, ratio 0-1"),
      chain_tier: "Curated chain tier (registry_chains.tier); null when untiered",
      chain_environment_basis: "How chain_environment was set: the curated tier, or unknown-tier (default 50)",
      health_unavailable_reason: "Why health_score is null (e.g. rated share below 50%); null when scored",
    },
  },
  supply_history_daily: {
    summary: "Daily supply per coin, native units and USD",
    grain: "one row per stablecoin_id, date (UTC day)",
    source: DL,
    methodology: ["supply-valuation"],
    columns: {
      circulating_native: tok(
        "Circulating supply in native token units (level-adjusted when a lower-priority source fills the day)",
      ),
      circulating_usd: usd("circulating_native × usd_per_native, USD; null when valuation_basis is unavailable"),
      source: "Upstream of the native units: defillama-list, defillama-detail or coingecko-market-cap",
    },
  },
  total_supply_daily: {
    summary: "Aggregate supply chart per peg type (ballast-listed universe and DefiLlama all-chain totals)",
    grain: "one row per date (UTC day), aggregate_universe, peg_type",
    source: DL,
    methodology: ["supply-valuation"],
    columns: {
      aggregate_universe:
        "ballast-listed (our listed coins, one valuation rule) or defillama-all (DefiLlama's all-chain totals, incl. unlisted assets)",
      peg_type: "DefiLlama peg type the sum covers (e.g. peggedUSD), or total for all peg types",
      circulating_usd: usd("Summed circulating supply of the universe and peg type on the day, USD"),
    },
  },
  non_usd_share_daily: {
    summary: "Share of non-USD peg groups in listed supply",
    grain: "one row per date (UTC day)",
    source: DL,
    methodology: ["supply-valuation"],
    columns: {
      total_usd: usd("Listed supply of all peg groups on the day, USD (2 dp)"),
      commodity_usd: usd("Listed supply of commodity pegs (gold, silver), USD"),
      fiat_non_usd_usd: usd("Listed supply of non-USD fiat pegs (EUR, CHF, … incl. OTHER), USD"),
      commodity_share_pct: pct("commodity_usd / total_usd in percent 0-100 (4 dp)"),
      fiat_non_usd_share_pct: pct("fiat_non_usd_usd / total_usd in percent 0-100 (4 dp)"),
      floating_usd: usd("Listed supply of floating pegs (CPI-indexed, redemption-rate targets, peggedVAR), USD"),
      floating_share_pct: pct("floating_usd / total_usd in percent 0-100 (4 dp)"),
      usd_peg_usd: usd("Listed supply of USD pegs, USD"),
      usd_share_pct: pct("usd_peg_usd / total_usd in percent 0-100 (4 dp)"),
    },
  },
  fx_rates_daily: {
    summary: "FX reference: USD per unit of each currency",
    grain: "one row per date, currency",
    source: "Frankfurter (ECB reference rates)",
    columns: {
      date: day("ECB business day the reference rate belongs to (no row on days without a publication)"),
      currency: "ISO 4217 currency code (EUR, CHF, …)",
      usd_per_unit: "USD per one unit of the currency, from the EUR-based ECB reference rates",
      published_at: unix(
        "When the day's reference rates were published (16:00 Europe/Berlin), Unix seconds; a build uses only rates published by its as-of",
      ),
    },
  },
  price_history_daily: {
    summary: "Daily price history per source",
    grain: "one row per source, gecko_id, date",
    source: PRICES,
    columns: {
      source: "Price source label of the series (defillama-prices, coingecko, alchemy, binance, …)",
      date: day("UTC day of the source's daily price point"),
      price_usd: usd("The source's daily price, USD per token"),
    },
  },
  chain_supply_samples: {
    summary: "On-chain totalSupply() samples, native units",
    grain: "one row per chain_id, contract_address, block_number",
    source: "on-chain totalSupply() reads",
    columns: {
      date: day("UTC day of the sampled block"),
      observed_at: unix("Block time of the sample, Unix seconds"),
      supply_raw: base("totalSupply() as read, token base units (integer)"),
      supply_native: tok("supply_raw / 10^decimals, token units"),
    },
  },
  depeg_events: {
    summary: "Public depeg incidents (spec 2.6)",
    grain: "one row per id",
    source: PRICES,
    methodology: ["depeg-detection", "depeg-resolver"],
    columns: {
      id: "Depeg incident id: deterministic integer < 2^52 from coin, start and source",
      direction: "Side of the peg the price left to: above or below",
      peak_deviation_bps: bps(
        "Largest deviation from the peg reference during the incident, basis points (negative below peg)",
      ),
      started_at: unix("Start of the incident, Unix seconds"),
      ended_at: unix("End of the incident (recovery), Unix seconds; null while open"),
      start_price: usd("Consensus price at the start, USD"),
      peak_price: usd("Consensus price at the peak deviation, USD"),
      recovery_price: usd("Consensus price at recovery, USD; null while open"),
      peg_reference: usd("Peg reference price in USD (1 for USD pegs; FX rate for other currencies)"),
      source: "live (detected by the monitor on live quotes) or backfill (from recorded daily history)",
      confirmation_sources:
        "Source categories that confirmed the incident, `+`-joined (e.g. CEX+coingecko); null when none was needed",
      pending_reason:
        "Why the incident needed confirmation before publishing (large-cap, low-confidence, single-daily-point, extreme-move, `+`-joined); null when none",
      close_reason: "Why the incident ended (recovered-primary, orphan-tracking-removed, …); null while open",
      constituent_event_count: "Number of raw threshold crossings merged into this incident",
      provenance_json: "JSON object of the quotes and rules the incident was opened and confirmed from",
      trace_json: "JSON object of the slots at opening, peak, first sighting and close (time, price, bps, sources)",
      source_families: "Independent source families whose quotes showed the condition, `+`-joined",
    },
  },
  depeg_pending: {
    summary: "Depeg candidates awaiting confirmation",
    grain: "one row per stablecoin_id, direction",
    source: PRICES,
    methodology: ["depeg-detection"],
    columns: {
      direction: "Side of the peg the price left to: above or below",
      first_seen_at: unix("First slot showing the condition, Unix seconds"),
      last_seen_at: unix("Latest slot showing the condition, Unix seconds"),
      first_seen_bps: bps("Deviation at first sight, basis points (negative below peg)"),
      last_seen_bps: bps("Deviation at the latest sighting, basis points"),
      peak_seen_bps: bps("Largest deviation seen so far, basis points"),
      reason: "Why confirmation is needed (large-cap, low-confidence, extreme-move, …, `+`-joined)",
      age_sec: secs("Seconds since first_seen_at at the as-of"),
      expires_at: unix("When the candidate is dropped unconfirmed, Unix seconds"),
      available_categories_json: "JSON array of source categories that could still confirm the candidate",
      missing_categories_json: "JSON array of source categories whose confirmation is missing",
    },
  },
  tape_events: {
    summary: "Chronological tape of depeg and freeze events (/api/events)",
    grain: "one row per id",
    source: `${PRICES}; ${CHAIN}`,
    methodology: ["depeg-detection", "freeze-ledger"],
    columns: {
      id: "Tape event id (derived from the depeg incident or freeze event and the event type)",
      type: "Event type: depeg.started, depeg.recovered, depeg.closed, freeze.blacklist, freeze.unblacklist or freeze.destroy",
      class: "Event class: depeg or freeze",
      ts: unix("When the event happened (incident start or end, or block time), Unix seconds"),
      chain: "Registry chain id of a freeze event; null for depeg events",
      severity: "info, warning or critical (tape display level)",
      title: "One-line human-readable headline of the event",
      deviation_bps: bps("Deviation of a depeg event from the peg reference, basis points; null for freeze events"),
      depeg_event_id: "The depeg incident this event belongs to (depeg_events.id); null for freeze events",
    },
  },
  peg_scores: {
    summary: "Peg scores per coin",
    grain: "one row per stablecoin_id",
    source: PRICES,
    methodology: ["peg-score"],
    columns: {
      current_deviation_bps: bps(
        "Deviation of the current consensus price from the peg reference, basis points; null for unjudged coins",
      ),
      price: usd("Current consensus price, USD; null when no usable quote"),
      reference_source:
        "Where peg_reference comes from: par (USD peg, 1), fx (reference rate), median (peer median), fx-fallback, floating, or missing",
      peg_score: score(
        "Peg score 0-100 = clamp(round(0.5 peg_pct + 0.5 severity_score − active_penalty − spread_penalty)); null when unavailable",
      ),
      peg_pct: pct("Share of the observed 4-year window spent at peg, percent 0-100"),
      severity_score: score("Severity score 0-100 = max(0, 100 − Σ incident penalties (peak × duration × recency))"),
      spread_penalty: "Penalty for dispersion of incident peaks (≥ 2 incidents), points 0-15",
      active_penalty: "Penalty for an open incident, points 0-50 (0 when none is open)",
      event_count: "Number of depeg incidents in the 4-year window",
      worst_deviation_bps: bps(
        "Largest |peak deviation| among the window's incidents, basis points; null without incidents",
      ),
      active_depeg: "True when an incident is open at the as-of",
      last_event_at: unix("Start of the most recent incident, Unix seconds; null without incidents"),
      tracking_span_days: days("Days from the start of tracking (first accepted price, at most 4 years back) to as-of"),
      observation_started_at: unix("First consensus slot with a price, Unix seconds; null when never priced"),
      recent90d_json:
        "JSON object of the last 90 days: pegPct, incidentCount, thresholdCrossingCount, coverageLimited, observedDays, coveragePct",
      peg_score_unavailable_reason:
        "Why peg_score is null (nav-token, floating-peg, no current price, fewer than 30 priced days); null when scored",
      priced_days: days("UTC days with a consensus price in the 4-year window"),
      unjudged_reason:
        "Why the current price is not judged against the peg (NAV token, floating peg, no reference); null when judged",
    },
  },
  price_consensus_slots: {
    summary: "Consensus price per coin and slot",
    grain: "one row per stablecoin_id, slot_ts",
    source: PRICES,
    methodology: ["price-consensus"],
    columns: {
      slot_ts: unix("End of the price slot, Unix seconds"),
      price: usd("Consensus price of the slot, USD; null when no source quoted"),
      price_source: "Sources of the consensus price, `+`-joined",
      agree_sources: "Sources within the agreement window of the consensus, `+`-joined",
      consensus_sources: "Sources whose quotes entered the consensus, `+`-joined",
      reference_source:
        "Where peg_reference comes from: par, fx, median (peer median), fx-fallback, floating or missing",
      kind: "live (quotes captured live) or backfill (recorded daily history)",
      quotes_json: "JSON array of the slot's quotes: [source, category (off-chain, CEX, DEX, Pool), price USD]",
    },
  },
  price_observation_rejections: {
    summary: "Price quotes refused by a quality rule",
    grain: "one row per stablecoin_id, source, ts, reason",
    source: PRICES,
    methodology: ["price-consensus"],
    columns: {
      source: "Price source label of the refused quote",
      ts: unix("Time of the refused quote, Unix seconds"),
      price_usd: usd("The refused quote, USD"),
      reason: "Quality rule that refused it: single-source-spike, glitch-run, above-price-bound or stuck-quote",
    },
  },
  supply_value_rejections: {
    summary: "Supply values refused by a plausibility rule",
    grain: "one row per stablecoin_id, date, source, chain_id",
    source: DL,
    methodology: ["supply-valuation"],
    columns: {
      date: day("UTC day of the refused supply point"),
      source: "Upstream of the refused supply value (defillama-list, defillama-detail, coingecko-market-cap)",
      value_usd: usd("The refused supply value, USD"),
      reason:
        "Plausibility rule that refused it: above-10t-usd or over-100x-previous-day (previous point ≥ $1M, ≤ 7 days earlier)",
      chain_id: "Registry chain id of a refused per-chain value; null for a coin total",
    },
  },
  supply_chain_guard: {
    summary: "Coins quarantined by the supply-chain guard",
    grain: "one row per quarantined stablecoin_id",
    source: DL,
    methodology: ["supply-chain-guard"],
    columns: {
      reason:
        "Why the coin is quarantined: supply-chain-dropout (per-chain supply sums to more than the total beyond 1% + $1)",
      status: "Guard status: quarantined (chain rows withheld from every chain table)",
      quarantined_since: unix("Observation time of the list capture that tripped the guard, Unix seconds"),
      total_usd: usd("The coin's upstream total supply, USD (kept as published)"),
      chain_total_usd: usd("Sum of the coin's per-chain supply, USD (exceeding total_usd tripped the guard)"),
      chain_count: "Number of chains in the per-chain breakdown",
      chains_json:
        "JSON array of the withheld chain rows: chainLabel, chainId, listCurrentUsd, baselineUsd (USD), observedAt (Unix s), resolution",
    },
  },
  listed_supply_daily: {
    summary: "The listed universe per day with each coin's supply",
    grain: "one row per stablecoin_id, date",
    source: DL,
    methodology: ["supply-valuation"],
    columns: {
      date: day("UTC day a DefiLlama list observed the universe"),
      nav_token: "True for a NAV (yield-accruing) token (registry_coins.nav_token)",
      floating_peg: "True for a floating peg (registry_coins.floating_peg)",
      peg_group:
        "Peg group of the non-USD share: usd, commodity (gold/silver), floating (floating or VAR pegs) or fiat-non-usd",
      circulating_usd: usd("The coin's published supply that day (supply_history_daily), USD"),
    },
  },
  source_quality_daily: {
    summary: "Per coin and UTC day, the audit of the price sources behind the consensus",
    grain: "one row per stablecoin_id, date",
    source: PRICES,
    methodology: ["price-consensus"],
    columns: {
      date: day("UTC day of the consensus slots, YYYY-MM-DD (text; a slot's end time decides its day)"),
      judged: "Whether the day had a consensus to judge sources against",
      slots: "Consensus slots of the day",
      sources_quoted: "Sources that quoted a price, `+`-joined",
      families_quoted: "Independent source families that quoted, `+`-joined",
      disagreeing_sources: "Sources outside the 50 bps agreement window of a slot's consensus, `+`-joined",
      stuck_sources: "Sources repeating a stale value, `+`-joined",
      rejected_quotes: "Quotes rejected by a quality rule",
      rejected_json: "JSON object {source: {rule: count}} of rejected quotes",
      consensus_low: usd("Lowest consensus price of the day, USD"),
      consensus_high: usd("Highest consensus price of the day, USD"),
      high_confidence_slots: "Slots whose consensus had high confidence",
    },
  },
  source_lineage_check: {
    summary: "Whether two price sources copy each other, per coin and year",
    grain: "one row per source_a, source_b, gecko_id, year",
    source: PRICES,
    methodology: ["source-lineage-check"],
    columns: {
      source_a: "First daily price series of the pair (source label, source_a < source_b)",
      source_b: "Second daily price series of the pair (source label)",
      gecko_id: "CoinGecko id of the coin both series quote",
      year: "Calendar year (UTC) the pair is measured over",
      shared_days: days("00:00 UTC days both series quote in the year"),
      equal_days: days("Shared days whose USD prices agree within 1e-9"),
      equal_share: ratio("equal_days / shared_days, ratio 0-1"),
      family_a: "Declared source family of source_a (pipelines lineage declaration)",
      family_b: "Declared source family of source_b",
      verdict:
        "declared-same-family or undeclared-copy (≥ 95% equal over ≥ 30 shared days), else independent-by-evidence",
    },
  },
  blacklist_events: {
    summary: "Freeze/blacklist ledger (spec 2.5): blacklist, unblacklist and destroy events, valued at event time",
    grain: "one row per id",
    source: CHAIN,
    methodology: ["freeze-ledger"],
    columns: {
      id: "Freeze event id (the ledger's key)",
      event_type: "blacklist, unblacklist or destroy",
      address: "Frozen, unfrozen or wiped address",
      amount_raw: base("Amount in token base units (integer, token units × 10^decimals); null when unknown"),
      amount_decimal: tok("Amount in token units as an exact decimal string; null when unknown"),
      amount_native: tok("Amount in token units as a double (amount_raw / 10^decimals); null when unknown"),
      amount_usd_at_event: usd(
        "Amount in USD at event time (supply valuation rule of the event's UTC day); null when unknown",
      ),
      amount_source:
        "Where the amount comes from (event, historical_balance, current_balance_snapshot, derived, legacy_migration, unavailable)",
      amount_status: "resolved, recoverable_pending, permanently_unavailable, provider_failed or ambiguous",
      ts: unix("Block time in Unix seconds"),
      topic0: "keccak256 topic0 of the event",
      linked_freeze_event_id: "For a destroy: id of the freeze that made it possible",
      frozen_duration_sec: secs("For a destroy: seconds between freeze and destroy"),
      methodology_version: "Freeze-ledger methodology version of the row",
    },
  },
  mint_burn_events: {
    summary: "Classified mint/burn events of tracked supply contracts",
    grain: "one row per id",
    source: CHAIN,
    methodology: ["mint-burn"],
    columns: {
      id: "Mint/burn event id (the on-chain ledger's key)",
      direction: "mint or burn",
      flow_type:
        "Classification: standard, atomic_roundtrip, fast_roundtrip, bridge_transfer or frozen_funds (only standard enters flow aggregates)",
      burn_type: "For a burn: redemption, roundtrip, bridge or frozen_funds; null for mints",
      scope: "Economic scope of the flow: issuance, roundtrip, bridge or enforcement",
      address: "Recipient of a mint or holder burned from",
      amount_raw: base("Amount in token base units (integer)"),
      amount_native: tok("amount_raw / 10^decimals, token units"),
      amount_usd_at_event: usd("amount_native × price_usd_at_event, USD; null when unpriced"),
      tx_from: "Sender (from) of the transaction that emitted the event",
      ts: unix("Block time in Unix seconds"),
      roundtrip_pair_id: "For a round trip: id of the opposite event it pairs with; null otherwise",
    },
  },
  mint_burn_hourly: {
    summary: "Hourly mint/burn aggregates per coin",
    grain: "one row per stablecoin_id, hour_ts",
    source: CHAIN,
    methodology: ["mint-burn"],
    columns: {
      hour_ts: unix("Start of the UTC hour, Unix seconds"),
      minted_native: tok("Sum of standard mints in the hour, token units"),
      burned_native: tok("Sum of standard burns in the hour, token units"),
      minted_usd: usd("USD sum of the priced standard mints (value at event time)"),
      burned_usd: usd("USD sum of the priced standard burns (value at event time)"),
      mint_count: "Number of standard mints in the hour",
      burn_count: "Number of standard burns in the hour",
      unpriced_mint_count: "Standard mints without a USD value (left out of minted_usd)",
      unpriced_burn_count: "Standard burns without a USD value (left out of burned_usd)",
      atomic_roundtrip_count: "Events classified atomic_roundtrip in the hour (excluded from the sums)",
      fast_roundtrip_count: "Events classified fast_roundtrip in the hour (excluded from the sums)",
      bridge_transfer_count: "Events classified bridge_transfer in the hour (excluded from the sums)",
      frozen_funds_count: "Burns classified frozen_funds in the hour (excluded from the sums)",
    },
  },
  mint_burn_daily: {
    summary: "Daily (UTC) mint/burn aggregates per coin",
    grain: "one row per stablecoin_id, date",
    source: CHAIN,
    methodology: ["mint-burn"],
    columns: {
      minted_native: tok("Sum of standard mints of the UTC day, token units"),
      burned_native: tok("Sum of standard burns of the UTC day, token units"),
      minted_usd: usd("USD sum of the day's priced standard mints (value at event time)"),
      burned_usd: usd("USD sum of the day's priced standard burns (value at event time)"),
      mint_count: "Number of standard mints of the day",
      burn_count: "Number of standard burns of the day",
      unpriced_mint_count: "Standard mints of the day without a USD value",
      unpriced_burn_count: "Standard burns of the day without a USD value",
    },
  },
  bluechip_ratings: {
    summary: "Bluechip ratings joined to registry ids",
    grain: "one row per slug",
    source: "Bluechip ratings (recorded captures)",
    columns: {
      slug: "Bluechip's own coin slug (the rating's key)",
      stablecoin_id: "Matched registry coin (registry_coins.id); null when unmatched (see unmatched_reason)",
      name: "Coin name as Bluechip writes it",
      symbol: "Ticker as Bluechip writes it",
      grade: "Bluechip letter grade (descriptive; not used in our scores)",
      score: "Bluechip's numeric score as published (Bluechip's own scale; descriptive only)",
      report_date: day("Date of Bluechip's report"),
      last_change_date: day("Date the Bluechip grade last changed"),
      url: "Bluechip report page",
      observed_at: unix("When the Bluechip capture was observed, Unix seconds"),
      unmatched_reason:
        "Why no registry coin was matched: ambiguous-symbol, unknown-symbol or duplicate-stablecoin; null when matched",
      candidate_ids: "Registry ids the rating could not be resolved between, comma-separated; null when matched",
    },
  },
  usds_status: {
    summary: "Sky USDS freeze-module probe",
    grain: "at most one row",
    source: "on-chain eth_call probe",
    columns: {
      token: "USDS token contract (ERC-1967 proxy) address probed, lowercase",
      evm_chain_id: "EVM chain id of the probe (1 = Ethereum mainnet)",
      freeze_module_active: "True when the implementation answers isBlocked(address) (a freeze function exists)",
      implementation_address: "Implementation contract behind the proxy at the probed block",
      known_no_freeze_implementation: "True when the implementation is the one recorded without a freeze function",
      probe_outcome: "Outcome of the isBlocked(address) eth_call: answered or reverted",
      probe_result: "Boolean isBlocked returned; null when the probe reverted",
      probe_reason: "Revert reason of the probe; null when it answered",
      total_supply_raw: base(
        "USDS totalSupply() at the probed block, token base units; null when the capture's value was malformed",
      ),
      block_number: "Ethereum block the probe read",
      block_hash: "Hash of the probed block",
      block_timestamp: unix("Block time of the probed block, Unix seconds"),
      observed_at: unix("When the probe was captured (the capture is used from then on), Unix seconds"),
      capture_path: "Recorded capture file the row was read from",
    },
  },
  report_cards: {
    summary: "Safety scores and report cards per coin",
    grain: "one row per stablecoin_id",
    source: `${REG}; ${DL}; ${PRICES}`,
    methodology: ["safety-score", "report-card"],
    columns: {
      safety_score: score(
        "Safety score 0-100 (backing 40%, exit 35%, economic control 25%, × peg multiplier); null when not rated",
      ),
      safety_grade: "Safety grade A+..F, NR when not rated (a required input is missing)",
      safety_json:
        "JSON object of the safety score: score, grade, pillars (backing, exit, control) with grades and details",
      report_card_score: score("Legacy report card overall score 0-100 (spec 2.11, five dimensions); null when NR"),
      report_card_grade: "Legacy report card grade A+..F, NR when not rated",
      report_card_json: "JSON object of the legacy report card: overallScore, overallGrade, baseScore, dimensions",
      raw_inputs_json:
        "JSON object of every input both grades were computed from (peg score, priced days, supply, risk facts, dependencies …)",
      is_defunct: "True when the coin is dead at the as-of (graded F as defunct)",
      coverage_class: "Coverage class: full, limited-peg-history (no peg score), unrated (NR) or defunct",
      methodology_version: "Safety-score methodology version id of the row (changelog under /methodology/)",
      report_card_methodology_version: "Report-card methodology version id of the row (changelog under /methodology/)",
    },
  },
  safety_score_history: {
    summary: "Safety score publications per coin and day",
    grain: "one row per stablecoin_id, date",
    source: REG,
    methodology: ["safety-score"],
    columns: {
      date: unix("UTC day of the score as Unix seconds of its 00:00 UTC (an integer, not a DATE)"),
      grade: "Safety grade A+..F or NR on that day; a row is written when grade or score changes",
      score: score("Safety score 0-100 on that day; null when NR"),
      prev_grade: "Grade of the previous row of the coin; null for the first (seed) row",
      prev_score: score("Score of the previous row of the coin; null for the seed row or when NR"),
      methodology_version: "Safety-score methodology version id the day was recomputed with",
      publication_kind:
        "backfill (recomputed by this build from what was known that day) or published (this build's as-of card)",
    },
  },
  dependency_edges: {
    summary: "Backing dependencies between coins",
    grain: "one row per from_id, to_id, type",
    source: REG,
    columns: {
      from_id: "Upstream coin the dependent relies on (registry_coins.id)",
      to_id: "Dependent coin (registry_coins.id) whose curated risk facts name the dependency",
      weight: ratio("Curated share of the dependent's backing or mechanism exposed to the upstream, ratio 0-1"),
      type: "Kind of dependency: collateral, mechanism or wrapper",
    },
  },
  stability_index_daily: {
    summary: "Peg stability index of the market",
    grain: "one row per date",
    source: `${PRICES}; ${DL}`,
    methodology: ["stability-index"],
    columns: {
      date: day("UTC day D; covers the consensus slots ending in (D 00:00, D+1 00:00] UTC, cut at as-of"),
      score: score(
        "Stability index 0-100 = clamp(100 − severity − breadth − stress_breadth + trend), one decimal; null when total_mcap_usd ≤ 0",
      ),
      band: "Band of score: BEDROCK ≥ 90, STEADY ≥ 75, TREMOR ≥ 60, FRACTURE ≥ 40, CRISIS ≥ 20, MELTDOWN < 20; null without score",
      severity:
        "Severity points 0-68: Σ |bps|/100 × mcap share × log2(1 + mcap/1e9) × 60 × age factor over depegged coins",
      breadth: "Breadth points 0-17: Σ sqrt(mcap/1e9) × 3 × age factor over depegged coins",
      stress_breadth:
        "Stress-breadth points 0-5: Σ sqrt(mcap/1e9) × 1.5 over coins whose DEWS base band is ALERT or worse",
      trend: pct("7-day % change of the paired universe's supply, clamped to −5..5 (percent points)"),
      total_mcap_usd: usd("Supply of the day's universe, USD (incl. cemetery-peak estimates of dead coins)"),
      contributors_json:
        "JSON array of the depegged coins counted: id, symbol, bps, mcapUsd, ageDays, factor, mcapBasis",
    },
  },
  dews_daily: {
    summary: "Depeg early-warning stress signal per coin",
    grain: "one row per stablecoin_id, date",
    source: `${PRICES}; ${DL}`,
    methodology: ["stress-signals"],
    columns: {
      date: day("UTC day D; covers the judged consensus slots ending in (D 00:00, D+1 00:00] UTC, cut at as-of"),
      score: score(
        "DEWS score 0-100 = round(clamp(base_score × psi_amplifier × contagion_amplifier)), then capped at 35 without market-price evidence",
      ),
      band: "DEWS band CALM..DANGER (CALM, WATCH, ALERT, WARNING, DANGER)",
      base_score: score(
        "Σ weight × value / Σ weight over the available signals, 0-100, capped at 35 without market-price evidence",
      ),
      psi_amplifier: "Stability-index amplifier 1-1.3: 1 + (75 − PSI)/75 × 0.3 below PSI 75, else 1",
      contagion_amplifier: "Contagion amplifier 1-1.2 from same-peg coins' base bands (DANGER 1.15, WARNING 1.08)",
      signals_json:
        "JSON object per signal (supplyVelocity, priceConfidence, divergence, blacklist, mintBurnFlow, poolDrift, …): value 0-100, weight, available, inputs",
      available_weight: ratio("Sum of the weights of the signals with input that day, ratio 0-1"),
      mcap_usd: usd("The coin's latest accepted supply at the window's end, USD; null without one"),
      methodology_version: "DEWS methodology version id of the row (changelog under /methodology/)",
    },
  },
  redemption_backstops: {
    summary: "Redemption backstop scores per coin",
    grain: "one row per stablecoin_id",
    source: REG,
    methodology: ["redemption-backstops"],
    columns: {
      score: score(
        "Redemption route score 0-100 (access, settlement, certainty, capacity, output quality, cost); null when capacity is unknown or the route is impaired",
      ),
      effective_exit_score: score(
        "Effective exit score 0-100: route score × capacity and confidence factors (DEX liquidity not yet included)",
      ),
      route_family:
        "Redemption route family: stablecoin-redeem, basket-redeem, collateral-redeem, psm-swap, queue-redeem or offchain-issuer",
      resolution_state:
        "How far the route could be resolved: resolved, missing-capacity, missing-cache or failed (impaired by a severe depeg)",
      model_confidence: "Confidence of the route model: high, medium or low",
      immediate_capacity_usd: usd("Redeemable immediately through the route, USD; null when unknown"),
      immediate_capacity_ratio: ratio(
        "Immediate capacity as a share of circulating supply, ratio 0-1; null when unknown",
      ),
      entry_json:
        "JSON object of the full backstop entry (spec 2.12): route facts, component scores, caps applied, impairedReason",
    },
  },
  yield_pools: {
    summary: "Yield pools of the newest DefiLlama /pools capture",
    grain: "one row per pool_id",
    source: YIELDS,
    methodology: ["yield-rankings"],
    columns: {
      pool_id: "DefiLlama pool id (UUID, stable across captures)",
      project: "DefiLlama project slug of the pool (protocol)",
      chain: "Registry chain id (the upstream label's registry match, else its slug)",
      chain_label: "Chain label as DefiLlama writes it",
      symbol: "Pool symbol as DefiLlama writes it (tokens joined by - or /)",
      tvl_usd: usd("Total value locked in the pool, USD"),
      apy: pct("Total APY in percent (2.84 = 2.84 %); null when the upstream has none"),
      apy_base: pct("Base (fee/interest) APY in percent; null when the upstream has none"),
      apy_reward: pct("Reward-token APY in percent; null when the upstream has none"),
      apy_pct_1d: pct("Change of the APY over 1 day, percentage points; null when the upstream has none"),
      apy_pct_7d: pct("Change of the APY over 7 days, percentage points; null when the upstream has none"),
      apy_pct_30d: pct("Change of the APY over 30 days, percentage points; null when the upstream has none"),
      is_stablecoin: "DefiLlama's own stablecoin-pool flag (symbol heuristic), not our matching",
      il_risk: "DefiLlama impermanent-loss risk flag (yes/no)",
      exposure: "DefiLlama exposure: single or multi (tokens in the pool)",
      pool_meta: "DefiLlama pool note (e.g. lock-up or tranche); null when none",
      outlier: "DefiLlama outlier flag on the APY",
      observed_at: unix("When the /pools capture was observed, Unix seconds"),
      underlying_tokens_json: "JSON array of the upstream token addresses; null when not given",
      reward_tokens_json: "JSON array of reward token addresses; null when not given",
      volume_usd_1d: usd("Trading volume over the last day, USD; null when unknown"),
      volume_usd_7d: usd("Trading volume over the last 7 days, USD; null when unknown"),
    },
  },
  pool_coin_matches: {
    summary: "Pool tokens matched to registry coins",
    grain: "one row per pool_id, token_index",
    source: YIELDS,
    methodology: ["yield-rankings"],
    columns: {
      pool_id: "DefiLlama pool id (yield_pools.pool_id)",
      token_index: "Position of the token in the pool (0-based)",
      token: "The token as the pool gives it: an address, or a symbol part of the pool symbol",
      chain: "Registry chain id of the pool",
      stablecoin_id: "Matched registry coin (registry_coins.id); null when unmatched",
      match_method: "address (by curated contract) or symbol-chain (by symbol among coins on the chain)",
      unmatched_reason:
        "Why no coin matched: no-stablecoin-token, unknown-symbol, ambiguous-symbol or not-on-chain; null when matched",
      candidate_ids: "Registry ids the token could not be resolved between; null when matched or none",
      chain_evidence:
        "Evidence that placed the matched coin on the chain: contract, chain-supply or none; null when unmatched",
    },
  },
  yield_single_asset_pools: {
    summary: "Single-token pools matched to one registry coin",
    grain: "one row per pool_id",
    source: YIELDS,
    methodology: ["yield-rankings"],
    columns: {
      pool_id: "DefiLlama pool id of a single-token pool (yield_pools.pool_id)",
      stablecoin_id: "The registry coin the pool's one token is (registry_coins.id)",
    },
  },
  dex_liquidity: {
    summary: "DEX liquidity scores per coin",
    grain: "one row per stablecoin_id",
    source: YIELDS,
    methodology: ["dex-liquidity"],
    columns: {
      liquidity_score: score(
        "DEX liquidity score 0-100: weighted depth, activity, concentration, spread, pool count; null without retained pools",
      ),
      depth_score: score("Depth component 0-100 = clamp(35 × log10(tvl / 700,000))"),
      activity_score: score(
        "Activity component 0-100 from 24 h volume / TVL; null when volume coverage is below half the TVL",
      ),
      concentration_score: score("Concentration component 0-100 = (1 − HHI) × 100 over retained pools"),
      spread_score: score("Spread component 0-100 over the number of protocols and chains"),
      pool_count_score: score("Pool-count component 0-100 = min(100, 5 × retained pools)"),
      total_tvl_usd: usd("TVL attributed to the coin over retained pools (pool TVL / tokens in pool), USD"),
      pool_count: "Retained pools (attributed TVL ≥ $10,000)",
      protocol_count: "Distinct protocols among the retained pools",
      chain_count: "Distinct chains among the retained pools",
      hhi: ratio("Herfindahl-Hirschman index of the retained pools' TVL shares, ratio 0-1"),
      total_volume_24h_usd: usd("Attributed 24 h volume, USD; null unless every retained pool reports it"),
      total_volume_7d_usd: usd("Attributed 7-day volume, USD; null unless every retained pool reports it"),
      volume_coverage_share: ratio("Share of retained TVL whose pools report a 24 h volume, ratio 0-1"),
      activity_status:
        "Volume availability: observed, activity-missing or activity-coverage-below-floor; null without retained pools",
      unavailable_reason: "Why the coin is not rated (no-retained-pools); null when rated",
      warning: "Warning naming a missing or partial volume; null when none",
      top_pools_json:
        "JSON array of the largest retained pools: poolId, project, chain, symbol, tvlUsd (attributed, USD), share 0-1, apy %, volume24hUsd",
      chains_json: "JSON array of the retained TVL per chain (attributed USD and share 0-1)",
      protocols_json: "JSON array of the retained TVL per protocol (DefiLlama project; attributed USD and share 0-1)",
      observed_at: unix("When the /pools capture scored was observed, Unix seconds"),
    },
  },
  dex_liquidity_daily: {
    summary: "DEX liquidity per coin and day",
    grain: "one row per date, stablecoin_id",
    source: YIELDS,
    methodology: ["dex-liquidity"],
    columns: {
      date: day("UTC day of the /pools capture scored (newest capture of the day at or before as-of)"),
      liquidity_score: score("DEX liquidity score 0-100 of the day; null without retained pools"),
      total_tvl_usd: usd("TVL attributed to the coin over retained pools that day, USD"),
      pool_count: "Retained pools that day (attributed TVL ≥ $10,000)",
      hhi: ratio("Herfindahl-Hirschman index of the retained pools' TVL shares, ratio 0-1"),
      total_volume_24h_usd: usd("Attributed 24 h volume, USD; null unless every retained pool reports it"),
      activity_status:
        "Volume availability: observed, activity-missing or activity-coverage-below-floor; null without retained pools",
      unavailable_reason: "Why the coin is not rated that day (no-retained-pools); null when rated",
      observed_at: unix("When the day's /pools capture was observed, Unix seconds"),
    },
  },
};

/** Tables copied into the researchers' `ballast.duckdb`, in order. */
export const PUBLISHED_TABLES = Object.keys(PUBLISHED_TABLE_DOCS);

/**
 * Columns that mean the same in every published table that does not declare them itself
 * ({@link TableDoc.columns} wins): one declaration for e.g. every `stablecoin_id`.
 */
export const SHARED_COLUMN_DOCS: Record<string, ColumnDecl> = {
  stablecoin_id: "Ballast stablecoin id, `<ticker>-<issuer>` lowercase (registry_coins.id)",
  chain_id: "Ballast chain id, lowercase slug such as ethereum or tron (registry_chains.id)",
  date: day("UTC day, YYYY-MM-DD (daily buckets start 00:00 UTC)"),
  symbol: "Ticker symbol as the registry writes it (e.g. USDT)",
  name: "Display name from the registry",
  gecko_id: "CoinGecko coin id (registry_coins.gecko_id); null when CoinGecko does not list the coin",
  methodology_version: "Methodology version id the row was computed with (changelog under /methodology/)",
  peg_type: "DefiLlama peg type, e.g. peggedUSD, peggedEUR, peggedVAR",
  peg_currency: "ISO 4217 currency (or XAU/XAG commodity, VAR for floating) the coin is pegged to",
  peg_mechanism: "Peg mechanism from the registry: fiat-backed, crypto-backed, commodity-backed or algorithmic",
  observed_at: unix("When the upstream capture behind the row was observed, Unix seconds"),
  circulating_usd: usd("Circulating supply valued in USD under the supply valuation rule"),
  prev_day_usd: usd("Circulating supply about 1 day before (the list's 1-day bucket), USD"),
  prev_week_usd: usd("Circulating supply about 7 days before (the list's 7-day bucket), USD"),
  prev_month_usd: usd("Circulating supply about 30 days before (the list's 30-day bucket), USD"),
  block_number: "Block number on the event's chain",
  chain_name: "Chain display name (registry_chains.name)",
  decimals: "Token decimals of the contract: token units = base units / 10^decimals",
  tx_hash: "Transaction hash (0x-prefixed hex)",
  log_index: "Index of the log within its block",
  log_position: "Sortable position of the log on its chain: block_number × 100000 + log_index",
  contract_address: "Token contract address on the chain (lowercase hex for EVM chains)",
  config_key: "Tracked-contract entry of pipelines/onchain config that matched the log",
  event_signature: "Solidity signature of the decoded event, e.g. AddedBlackList(address)",
  origin:
    "How the row entered the ledger: recorded (decoded from recorded logs) or live (decoded by the on-chain job from an RPC provider)",
  valuation_basis:
    "Which supply valuation rule priced the row: par, fx, fx-stale, consensus or unavailable (changelog supply-valuation)",
  usd_per_native: usd("USD per native token unit used to value the row (the valuation_basis rule of that UTC day)"),
  price_usd_at_event: usd("USD per token unit on the event's UTC day (supply valuation rule); null when unpriced"),
  level_adjustment: "Factor applied to the source's native units to join the preferred source's level (1 = none)",
  is_dead: "True when the registry marks the coin dead at the as-of",
  unreviewed: "True when the registry entry has not been reviewed by a curator yet",
  contracts_json: "JSON array of curated deployments: {chain, address, decimals} per chain",
  price_confidence: "Confidence of the consensus price: high, single-source, low or fallback",
  peg_reference: usd(
    "Peg reference value in USD the deviation is measured against (1 for USD pegs; FX rate otherwise)",
  ),
  deviation_bps: bps("Deviation of the price from the peg reference, basis points (negative below peg)"),
};

/**
 * The declared documentation of `table`.`column`: the table's own declaration, else the shared one
 * ({@link SHARED_COLUMN_DOCS}). Never derived from the name: throws naming table and column when
 * neither declares it (or the table is not published).
 */
export function columnDocOf(table: string, column: string): FieldDoc {
  const t = PUBLISHED_TABLE_DOCS[table];
  if (!t) throw new Error(`table ${table} is not published (datasets/table-docs.ts)`);
  const decl = t.columns[column] ?? SHARED_COLUMN_DOCS[column];
  if (decl === undefined) throw new Error(`column ${table}.${column} has no declared comment (datasets/table-docs.ts)`);
  return typeof decl === "string" ? { description: decl } : decl;
}

/**
 * `COMMENT ON TABLE` text of `table`: summary, grain, source and the methodology version ids in force
 * (pipelines/analytics/changelogs.ts). Deterministic: a function of the code only.
 */
export function tableCommentOf(table: string): string {
  const t = PUBLISHED_TABLE_DOCS[table];
  if (!t) throw new Error(`table ${table} is not published (datasets/table-docs.ts)`);
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
  "<!-- duckdb-tables:start (generated by `npm run readme-duckdb` from datasets/table-docs.ts) -->";
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
