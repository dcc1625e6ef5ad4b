// Versions of the supply methodologies, which are SQL (pipelines/models): read by the changelog table
// (pipelines/analytics/changelogs.ts). Imports nothing.

/**
 * Methodology version of current supply and its valuation (the freshness windows of
 * int_coins_supply_usd / int_coins_supply_current, the rule of int_supply_valuation_daily and the units of
 * int_supply_history_points / int_supply_daily; changelog supply-valuation.md).
 */
export const SUPPLY_VALUATION_VERSION = "ballast-supply-valuation-v2";

/** Methodology version of the supply-chain guard (pipelines/models/marts/supply_chain_guard.sql; changelog supply-chain-guard.md). */
export const SUPPLY_CHAIN_GUARD_VERSION = "ballast-supply-chain-guard-v1";
