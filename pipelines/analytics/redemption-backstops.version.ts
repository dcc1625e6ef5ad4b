// Declarations of the redemption-backstops methodology that readers outside the analytic need (the changelog table,
// the site-data artifacts, hence the API server): version id and the published weights and caps, kept apart from the analytic
// (pipelines/analytics/redemption-backstops.ts) so that reading them loads no analytic code. Imports nothing.

/** Methodology version of redemption backstops (changelog redemption-backstops.md). */
export const REDEMPTION_BACKSTOP_VERSION = "ballast-redemption-backstop-v1";

/** Weights of a route's score components (sum 1). */
export const COMPONENT_WEIGHTS = {
  access: 0.2,
  settlement: 0.15,
  executionCertainty: 0.15,
  capacity: 0.25,
  outputAssetQuality: 0.15,
  cost: 0.1,
} as const;

/** Route-family caps of the score and the cap names published in `capsApplied`. */
export const ROUTE_FAMILY_CAPS = {
  "queue-redeem": { max: 70, cap: "queue-route-cap" },
  "offchain-issuer": { max: 65, cap: "offchain-route-cap" },
} as const;

/** Open below-peg incident at or beyond this |peak| (bps) impairs the route. */
export const SEVERE_DEPEG_BPS = 2500;

/** Effective exit: the better of DEX liquidity and redemption counts in full, the other adds 0.1 × its score (independent issuer rails only). */
export const EFFECTIVE_EXIT_WEIGHTS = { liquidity: 1, redemption: 1, secondaryBonus: 0.1 } as const;
