import type { Analytic } from "./contract.ts";
import { depegResolver } from "./depeg-resolver.ts";
import { dexLiquidityAnalytic } from "./dex-liquidity.ts";
import { pegMonitor } from "./peg-monitor.ts";
import { pegSummary } from "./peg-summary.ts";
import { poolCoinMatchesAnalytic } from "./pool-matching.ts";
import { redemptionBackstops } from "./redemption-backstops.ts";
import { sourceLineageCheck } from "./source-lineage-check.ts";
import { reportCards } from "./report-cards.ts";
import { stabilityIndexAnalytic } from "./stability-index.ts";
import { dewsAnalytic, dewsBaseAnalytic } from "./stress-signals.ts";

/**
 * Every TS analytic of the model DAG. Adding one = adding it here. DEWS runs in two passes around
 * the stability index: `dews_base` → `stability_index` (stress breadth) → `dews` (amplified).
 */
export const ANALYTICS: Analytic[] = [
  sourceLineageCheck,
  pegMonitor,
  pegSummary,
  depegResolver,
  dewsBaseAnalytic,
  stabilityIndexAnalytic,
  dewsAnalytic,
  reportCards,
  poolCoinMatchesAnalytic,
  dexLiquidityAnalytic,
  redemptionBackstops,
];

/** Nodes of the risk stage (DEWS, stability index, safety scores with their history), timed by `make bench`. */
export const RISK_STAGE: string[] = [dewsBaseAnalytic, stabilityIndexAnalytic, dewsAnalytic, reportCards].map(
  (a) => a.name,
);

/**
 * Nodes of the markets stage (pool staging and marts, pool matching, DEX liquidity, redemption backstops,
 * chain health), timed by `make bench` over a build that holds the recorded pool sample.
 */
export const MARKETS_STAGE: string[] = [
  "stg_defillama__yield_pools",
  "int_yield_pools_daily",
  "yield_pools",
  poolCoinMatchesAnalytic.name,
  "yield_single_asset_pools",
  dexLiquidityAnalytic.name,
  redemptionBackstops.name,
  "chain_health",
];
