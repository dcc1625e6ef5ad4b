// Declarations of the peg-score methodology that readers outside the analytic need (the changelog table,
// the site-data artifacts, hence the API server): its version id, kept apart from the analytic
// (pipelines/analytics/peg-score.ts) so that reading them loads no analytic code. Imports nothing.

/** Methodology version of the peg score (changelog peg-score.md). */
export const PEG_SCORE_VERSION = "ballast-peg-score-v3";
