// Declarations of the chain-health methodology that readers outside the analytic need (the changelog table,
// the site-data artifacts, hence the API server): its version id. The score itself is SQL (mart
// `chain_health`, pipelines/models/marts/chain_health.sql). Imports nothing.

/**
 * Chain health score methodology id. The score is computed by the mart `chain_health`
 * (`pipelines/models/marts/chain_health.sql`: formula, inputs and bands in its header; changelog
 * `pipelines/analytics/changelogs/chain-health.md`); `/api/chains` publishes it as
 * `healthMethodologyVersion`.
 */
export const CHAIN_HEALTH_METHODOLOGY_VERSION = "ballast-chain-health-v1";
