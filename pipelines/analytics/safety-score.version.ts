// Declarations of the safety-score methodology that readers outside the analytic need (the changelog table,
// the site-data artifacts, hence the API server): its version ids, kept apart from the analytic
// (pipelines/analytics/safety-score.ts) so that reading them loads no analytic code. Imports nothing.

/** Methodology version of the safety score (changelog safety-score.md). */
export const SAFETY_SCORE_VERSION = "ballast-safety-score-v2";

/** Version of the published report card (changelog report-card.md). */
export const REPORT_CARD_VERSION = "ballast-report-card-v2";
