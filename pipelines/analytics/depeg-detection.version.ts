// Declarations of the depeg-detection methodology that readers outside the analytic need (the changelog table,
// the site-data artifacts, hence the API server): its version id, kept apart from the analytic
// (pipelines/analytics/depeg-detection.ts) so that reading them loads no analytic code. Imports nothing.

/** Methodology version of depeg detection (changelog depeg-detection.md); incidents carry it. */
export const DEPEG_METHODOLOGY_VERSION = "ballast-depeg-v4";
