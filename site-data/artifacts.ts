import { bluechipRatingsArtifact } from "./bluechip-ratings.ts";
import { usdsStatusArtifact } from "./usds-status.ts";
import { blacklistLedgerArtifact, blacklistSummaryArtifact } from "./blacklist.ts";
import { chainsArtifact } from "./chains.ts";
import type { Artifact } from "./contract.ts";
import { depegLedgerArtifact, tapeLedgerArtifact } from "./depeg-events.ts";
import { dexLiquidityArtifact, dexLiquidityHistoryArtifact } from "./dex-liquidity.ts";
import { depegResolverArtifact, depegResolverReviewArtifact } from "./depeg-resolver.ts";
import { mintBurnFlowsArtifact, mintBurnLedgerArtifact } from "./mint-burn.ts";
import { nonUsdShareArtifact } from "./non-usd-share.ts";
import { pegSummaryArtifact } from "./peg-summary.ts";
import { redemptionBackstopsArtifact } from "./redemption-backstops.ts";
import {
  dependencyGraphArtifact, dependencyScenariosArtifact, reportCardsArtifact, reportCardsV9Artifact, safetyGradesArtifact, safetyScoreHistoryArtifact,
} from "./report-cards.ts";
import { stabilityIndexArtifact } from "./stability-index.ts";
import { stablecoinChartsArtifact } from "./stablecoin-charts.ts";
import { stablecoinDetailArtifact } from "./stablecoin-detail.ts";
import { stablecoinReservesArtifact } from "./stablecoin-reserves.ts";
import { stablecoinSummaryArtifact } from "./stablecoin-summary.ts";
import { stablecoinsArtifact } from "./stablecoins.ts";
import { stressSignalsArtifact } from "./stress-signals.ts";
import { yieldAdapterManifestArtifact, yieldHistoryArtifact, yieldRankingsArtifact } from "./yields.ts";
import { supplyHistoryArtifact } from "./supply-history.ts";

/** Every site-data artifact a build emits. Adding an artifact = adding it here. */
export const SITE_DATA_ARTIFACTS: Artifact[] = [
  stablecoinsArtifact, stablecoinSummaryArtifact, stablecoinDetailArtifact, stablecoinChartsArtifact,
  supplyHistoryArtifact, chainsArtifact, nonUsdShareArtifact, pegSummaryArtifact, depegResolverArtifact, depegResolverReviewArtifact,
  depegLedgerArtifact, tapeLedgerArtifact, blacklistLedgerArtifact, blacklistSummaryArtifact, mintBurnLedgerArtifact, mintBurnFlowsArtifact,
  reportCardsArtifact, reportCardsV9Artifact, safetyGradesArtifact, safetyScoreHistoryArtifact, dependencyGraphArtifact, dependencyScenariosArtifact,
  bluechipRatingsArtifact, dexLiquidityArtifact, dexLiquidityHistoryArtifact, usdsStatusArtifact,
  stabilityIndexArtifact, stressSignalsArtifact, redemptionBackstopsArtifact, stablecoinReservesArtifact,
  yieldRankingsArtifact, yieldHistoryArtifact, yieldAdapterManifestArtifact,
];
