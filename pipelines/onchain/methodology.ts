/**
 * Methodology versions of the on-chain analytics (changelogs in pipelines/analytics/changelogs/).
 * The marts write the same ids into `methodology_version` (blacklist_events, mint_burn_events); a
 * test checks they agree.
 */
export const FREEZE_METHODOLOGY = "ballast-freeze-v2";
export const FREEZE_METHODOLOGY_LABEL =
  "Freeze ledger v2: decoded freeze/unfreeze/destroy logs, exact base-unit amounts, USD by the supply valuation rule of the event day (USD pegs 1 × units), destroys linked to their freeze; totals with an unknown amount are null with a gap count";
export const MINT_BURN_METHODOLOGY = "ballast-mint-burn-v2";
export const MINT_BURN_METHODOLOGY_LABEL =
  "Mint/burn v2: zero-address Transfer, Issue/Redeem and Supply events; round trips, bridge transfers and frozen-fund burns excluded from flows and counted per window; USD by the supply valuation rule of the event day (USD pegs 1 × units)";
