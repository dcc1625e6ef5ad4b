// Declarations of the depeg-audit methodology that readers outside the analytic need (the changelog table,
// the site-data artifacts, hence the API server): its version id, kept apart from the analytic
// (pipelines/analytics/depeg-audit.ts) so that reading them loads no analytic code. Imports nothing.

/** Methodology version of the depeg audit (changelog depeg-audit.md). */
export const DEPEG_AUDIT_VERSION = "ballast-depeg-audit-v1";
