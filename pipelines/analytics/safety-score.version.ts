// Declarations of the safety-score and report-card methodology that readers outside the analytic need (the
// changelog table, the site-data artifacts, hence the API server): version ids, the grade scale, the fact
// score tables whose keys the registry facts take, the published weights, caps and ceilings, and the shapes
// of the inputs and results published with every card (`rawInputs`, pillars, dimensions). Kept apart from
// the analytic (pipelines/analytics/safety-score.ts) so that reading them loads no analytic code. Imports
// nothing.

/** Methodology version of the safety score (changelog safety-score.md). */
export const SAFETY_SCORE_VERSION = "ballast-safety-score-v2";

/** Version of the published report card (changelog report-card.md). */
export const REPORT_CARD_VERSION = "ballast-report-card-v2";

/** Letter grades of both models, best first, then `NR` (not rated: a required input is missing). */
export const GRADES = ["A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D", "F", "NR"] as const;

/** One of GRADES. */
export type Grade = (typeof GRADES)[number];

/** Grade thresholds, best first: the first `min` at or below the score gives the grade. */
export const GRADE_THRESHOLDS: { grade: Exclude<Grade, "NR">; min: number }[] = [
  { grade: "A+", min: 87 },
  { grade: "A", min: 83 },
  { grade: "A-", min: 80 },
  { grade: "B+", min: 75 },
  { grade: "B", min: 70 },
  { grade: "B-", min: 65 },
  { grade: "C+", min: 60 },
  { grade: "C", min: 55 },
  { grade: "C-", min: 50 },
  { grade: "D", min: 40 },
  { grade: "F", min: 0 },
];

// --- Fact scores (0-100) -------------------------------------------------------------------------

/** Collateral by risk tier of what backs the coin. */
export const COLLATERAL_SCORE = { "very-low": 100, low: 75, medium: 50, high: 25, "very-high": 5 } as const;
/** Custody of the backing. */
export const CUSTODY_SCORE = {
  onchain: 100,
  "institutional-top": 80,
  "institutional-regulated": 55,
  "institutional-unregulated": 30,
  "institutional-sanctioned": 5,
  cex: 0,
} as const;
/** Proof of reserves. */
export const PROOF_SCORE = {
  "real-time": 100,
  "independent-audit": 90,
  attestation: 75,
  "self-reported": 40,
  none: 10,
} as const;
/** Legacy decentralization: governance quality. */
export const GOVERNANCE_QUALITY = {
  "immutable-code": 100,
  "dao-governance": 85,
  multisig: 55,
  "regulated-entity": 40,
  "single-entity": 20,
  wrapper: 10,
} as const;
/** Safety score economic control: who can change the rules, and under what oversight. */
export const CONTROL_SCORE = {
  "immutable-code": 95,
  "regulated-entity": 85,
  "dao-governance": 75,
  multisig: 50,
  "single-entity": 35,
  wrapper: 50,
} as const;
/** Home-chain tier and deployment multiplier (infrastructure = round(tier × multiplier)). */
export const CHAIN_TIER_SCORE = {
  ethereum: 100,
  "stage1-l2": 66,
  "mature-alt-l1": 45,
  "established-alt-l1": 20,
  unproven: 0,
} as const;
/** Deployment multiplier of the home-chain tier score by how the coin is deployed across chains. */
export const DEPLOYMENT_MULTIPLIER = {
  "single-chain": 1,
  "canonical-bridge": 0.9,
  "native-multichain": 0.75,
  "third-party-bridge": 0.6,
} as const;
/**
 * Redemption route by backing: how directly a holder redeems at par. Off-chain issuer redemption (KYC,
 * minimums, business days) is capped at 65 like the reference's offchain-issuer family; permissionless
 * on-chain redemption of over-collateralised CDPs scores higher.
 */
export const REDEMPTION_ROUTE = {
  "fiat-reserves": { score: 65, family: "offchain-issuer" },
  "treasury-fund": { score: 60, family: "offchain-issuer" },
  commodity: { score: 60, family: "offchain-issuer" },
  "crypto-overcollateralized": { score: 75, family: "collateral-redeem" },
  "delta-neutral": { score: 55, family: "collateral-redeem" },
  "rwa-credit": { score: 45, family: "queue-redeem" },
  hybrid: { score: 50, family: "basket-redeem" },
  algorithmic: { score: 20, family: "stablecoin-redeem" },
} as const;
/** Score assumed for an upstream coin without a grade. */
export const UNRATED_UPSTREAM_SCORE = 70;

/** Peg multiplier `(pegScore/100)^exponent` applied to both models' base score. */
export const PEG_MULTIPLIER_EXPONENT = 0.4;
/**
 * Weights of the legacy card's dimensions, renormalised over the rated ones (pegStability 0: the peg enters
 * as the multiplier).
 */
export const LEGACY_WEIGHTS = {
  pegStability: 0,
  liquidity: 0.3,
  resilience: 0.2,
  decentralization: 0.15,
  dependencyRisk: 0.25,
} as const;
/** Weights of the safety score's pillars (sum 1). */
export const PILLAR_WEIGHTS = { backing: 0.4, exit: 0.35, economicControl: 0.25 } as const;
/** Factor on the legacy overall when its liquidity dimension is NR. */
export const NO_LIQUIDITY_PENALTY = 0.9;
/** Ceiling (0-100) of a coin with a current price but fewer than 30 priced days (`insufficient-history`): A−. */
export const LIMITED_EVIDENCE_CEILING = 80;
/** Active-depeg caps: an open depeg of at least `bps` (|bps|) caps the score at `max` (≤ 49 D, ≤ 39 F). */
export const ACTIVE_DEPEG_CAPS = { d: { bps: 1000, max: 49 }, f: { bps: 2500, max: 39 } } as const;

/** A dependency as the grade sees it: upstream scores at computation time (null: unrated upstream). */
export interface DependencyInput {
  id: string;
  weight: number;
  type: "collateral" | "custody" | "bridge" | "wrapper" | "mechanism";
  upstreamSafetyScore: number | null;
  upstreamReportCardScore: number | null;
}

/**
 * Every input of one coin's grades (spec 2.11 `rawInputs` names plus the facts this model reads).
 * Scores 0-100, bps signed, times Unix s, USD. Risk facts are null when the registry has no curated
 * `risk` block for the coin. Sources: peg scores and incidents (price consensus over DefiLlama,
 * CoinGecko, Binance), circulating supply (DefiLlama list/detail), the curated registry.
 */
export interface RawInputs {
  pegScore: number | null;
  /** Why pegScore is null (peg-summary reasons). */
  pegScoreUnavailableReason: string | null;
  pricedDays: number;
  /**
   * Whether the coin has a current price at as-of (`peg_scores.price` not null: an accepted quote inside
   * its source's staleness window; in the daily history, a priced day within the 2 days before). False
   * makes every grade NR, NAV tokens and floating pegs included.
   */
  hasCurrentPrice: boolean;
  activeDepeg: boolean;
  /** |bps| of the worst open incident's peak, or the current deviation when beyond the threshold; null when none. */
  activeDepegBps: number | null;
  currentDeviationBps: number | null;
  depegEventCount: number;
  lastEventAt: number | null;
  circulatingUsd: number | null;
  liquidityScore: number | null;
  effectiveExitScore: number | null;
  redemptionBackstopScore: number | null;
  redemptionRouteFamily: string | null;
  redemptionModelConfidence: string | null;
  redemptionUsedForLiquidity: boolean;
  redemptionImmediateCapacityUsd: number | null;
  redemptionImmediateCapacityRatio: number | null;
  concentrationHhi: number | null;
  bluechipGrade: string | null;
  canBeBlacklisted: boolean | "possible" | "inherited" | null;
  chainTier: keyof typeof CHAIN_TIER_SCORE | null;
  deploymentModel: keyof typeof DEPLOYMENT_MULTIPLIER | null;
  backing: keyof typeof REDEMPTION_ROUTE | null;
  collateralQuality: keyof typeof COLLATERAL_SCORE | null;
  custodyModel: keyof typeof CUSTODY_SCORE | null;
  proofOfReserves: keyof typeof PROOF_SCORE | null;
  governanceTier: keyof typeof GOVERNANCE_QUALITY | null;
  governanceQuality: number | null;
  dependencies: DependencyInput[];
  navToken: boolean;
  floatingPeg: boolean;
  isDefunct: boolean;
}

/** One dimension or pillar: grade, score 0-100 (null when NR) and a one-line reason. */
export interface Dimension {
  grade: Grade;
  score: number | null;
  detail: string;
}

/** Safety score result (current model). */
export interface SafetyScore {
  score: number | null;
  grade: Grade;
  pillars: { backing: Dimension; exit: Dimension; economicControl: Dimension };
  /** Score before peg, dependency and caps (1 decimal). */
  baseScore: number | null;
  pegMultiplier: number | null;
  caps: string[];
  missingInputs: string[];
}

/** Legacy report card (spec 2.11 dimensions) of one coin. */
export interface LegacyCard {
  overallScore: number | null;
  overallGrade: Grade;
  baseScore: number | null;
  dimensions: Record<keyof typeof LEGACY_WEIGHTS, Dimension>;
  ratedDimensions: number;
  missingInputs: string[];
}
