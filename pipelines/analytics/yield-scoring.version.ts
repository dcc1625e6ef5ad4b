// Declarations of the yield-scoring methodology that readers outside the analytic need (the changelog table,
// the site-data artifacts, hence the API server): its version id, kept apart from the analytic
// (pipelines/analytics/yield-scoring.ts) so that reading them loads no analytic code. Imports nothing.

/** Methodology version of the yield rankings (changelog yield-rankings.md). */
export const YIELD_VERSION = "ballast-yield-v1";
