// Declarations of the price-consensus methodology that readers outside the analytic need (the changelog table,
// the site-data artifacts, hence the API server): its version id, kept apart from the analytic
// (pipelines/analytics/price-consensus.ts) so that reading them loads no analytic code. Imports nothing.

/** Methodology version of the price consensus rules (changelog: pipelines/analytics/changelogs/price-consensus.md). */
export const PRICE_CONSENSUS_VERSION = "ballast-price-consensus-v3";
