// Declarations of the yield-scoring methodology that readers outside the analytic need (the changelog table,
// the site-data artifacts, hence the API server and its read-time `hydrate` in site-data/yields.ts): its
// version id, the published scaling factor, the safety score assumed without a card and the rounding of
// published figures, kept apart from the analytic (pipelines/analytics/yield-scoring.ts) so that reading
// them loads no analytic code; and the pool input type both read. Imports nothing.

/** Methodology version of the yield rankings (changelog yield-rankings.md). */
export const YIELD_VERSION = "ballast-yield-v1";

/** Scaling factor of `pharosYieldScore` (published as `scalingFactor` in the rankings file). */
export const SCALING_FACTOR = 8;

/** Safety score (0-100) assumed at read time for a coin without a safety card or with an NR card. */
export const DEFAULT_SAFETY_SCORE = 40;

/** `x` rounded to `d` decimals (`Math.round(x × 10^d) / 10^d`): the rounding of the published yield figures. */
export const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;

/** One pool as the build reads it: APY fields percent, TVL USD, `observedAt` Unix s. */
export interface PoolInput {
  poolId: string;
  stablecoinId: string;
  symbol: string;
  pegCurrency: string;
  project: string;
  chain: string;
  poolMeta: string | null;
  tvlUsd: number;
  apy: number;
  apyBase: number | null;
  apyReward: number | null;
  apyPct1D: number | null;
  apyPct7D: number | null;
  outlier: boolean;
  observedAt: number;
  backing: string | null;
  /** Daily APY samples of this pool (oldest first), this snapshot's included. */
  apySamples: number[];
}
