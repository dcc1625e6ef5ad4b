/**
 * Methodology versions of the on-chain analytics (changelogs in pipelines/analytics/changelogs/).
 * The marts write the same ids into `methodology_version` (blacklist_events, mint_burn_events); a
 * test checks they agree.
 */
export const FREEZE_METHODOLOGY = "ballast-freeze-v1";
export const FREEZE_METHODOLOGY_LABEL = "Freeze ledger v1: decoded freeze/unfreeze/destroy logs, exact base-unit amounts, USD at the event day's price, destroys linked to their freeze";
export const MINT_BURN_METHODOLOGY = "ballast-mint-burn-v1";
export const MINT_BURN_METHODOLOGY_LABEL = "Mint/burn v1: zero-address Transfer, Issue/Redeem and Supply events; round trips, bridge transfers and frozen-fund burns excluded from flows; USD at the event day's price";
