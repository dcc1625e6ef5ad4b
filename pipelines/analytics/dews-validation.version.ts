// Declarations of the dews-validation methodology that readers outside the analytic need (the changelog table,
// the site-data artifacts, hence the API server): its version id, kept apart from the analytic
// (pipelines/analytics/dews-validation.ts) so that reading them loads no analytic code. Imports nothing.

/** Methodology version of the DEWS validation (changelog dews-validation.md). */
export const DEWS_VALIDATION_VERSION = "ballast-dews-validation-v1";
