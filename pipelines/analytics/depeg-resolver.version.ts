// Declarations of the depeg-resolver methodology that readers outside the analytic need (the changelog table,
// the site-data artifacts, hence the API server): its version ids, kept apart from the analytic
// (pipelines/analytics/depeg-resolver.ts) so that reading them loads no analytic code. Imports nothing.

/** Version of the resolver's readiness score (changelog depeg-resolver.md). */
export const READINESS_VERSION = "readiness-72h-v1";

/** Version of the resolver's lock policy (changelog depeg-resolver.md). */
export const RESOLVER_POLICY_VERSION = "ballast-resolver-v1";
