// Declarations of the dex-liquidity methodology that readers outside the analytic need (the changelog table,
// the site-data artifacts, hence the API server): version id, label and the published parameters, kept apart from the analytic
// (pipelines/analytics/dex-liquidity.ts) so that reading them loads no analytic code. Imports nothing.

/** Methodology version of the DEX liquidity score (changelog dex-liquidity.md). */
export const DEX_LIQUIDITY_VERSION = "ballast-dex-liquidity-v1";

/** Human label of the DEX liquidity methodology, published beside its version. */
export const DEX_LIQUIDITY_LABEL =
  "DEX liquidity score v1 (TVL depth, concentration, protocol/chain spread, pool count; activity when volumes exist)";

/** Pools below this TVL (USD) are not retained. */
export const MIN_POOL_TVL_USD = 10_000;

/** Share of retained TVL (0-1) whose pools must report volume for the activity component to count. */
export const ACTIVITY_COVERAGE_FLOOR = 0.5;

/** Weights of the score's components (sum 1). */
export const DEX_WEIGHTS = { depth: 0.35, activity: 0.2, concentration: 0.2, spread: 0.15, poolCount: 0.1 } as const;

/** Most pools listed per coin in `topPools`. */
export const TOP_POOLS = 10;
