import {
  REDEMPTION_BACKSTOP_VERSION,
  COMPONENT_WEIGHTS,
  ROUTE_FAMILY_CAPS,
  SEVERE_DEPEG_BPS,
  EFFECTIVE_EXIT_WEIGHTS,
} from "./redemption-backstops.version.ts";
import type { RedemptionFacts } from "../registry/schema.ts";
import { type Analytic, inputsAs } from "./contract.ts";

/**
 * Redemption backstops (`ballast-redemption-backstop-v1`, spec 2.12): how well a holder can exit a coin
 * through its issuer or protocol instead of the market. Pure functions over one coin's curated
 * `redemption` facts (registry), its current circulating USD and its open depeg incidents.
 *
 * - **Route score** (0-100): 0.20 access + 0.15 settlement + 0.15 executionCertainty + 0.25 capacity +
 *   0.15 outputAssetQuality + 0.10 cost, null when the capacity score is null; family caps
 *   `queue-redeem` ≤ 70 (`queue-route-cap`), `offchain-issuer` ≤ 65 (`offchain-route-cap`); clamped, rounded.
 * - **Capacity score**: round(0.6 × coverage + 0.4 × absolute) from the immediate capacity as a share of
 *   supply (0 → 0, 1% → 20, 5% → 40, 10% → 60, 25% → 80, 50% → 100) and in USD (0 → 0, $100K → 20,
 *   $1M → 40, $10M → 60, $50M → 80, $250M → 100), linear between breakpoints; one side stands in for
 *   the other when missing, both missing → null. Then × the constraint multipliers: settlement (≤ 1 h
 *   1.0, same day 0.9, days 0.75, queued 0.6), queue (0.9 when queued redemptions exist: no backlog is
 *   observed, so the lowest queue penalty), minimum redeem (> $1M 0.75, > $10K 0.9), holder eligibility
 *   (any 1.0, verified customer 0.9, whitelisted primary 0.85, issuer discretionary 0.6).
 * - **Cost score** (ours; the reference publishes no fee curve): max(0, 100 − feeBps) when the fee is
 *   known, 50 when it is not.
 * - **Severe-depeg gate**: an open below-peg incident with |peak| ≥ 2500 bps impairs the route: score null,
 *   model confidence `low`, `resolutionState` `failed` (spec 2.12 has no `impaired` state; the entry's
 *   `impairedReason` says why). Curated (static) routes are never the strong live-direct exception.
 * - **Effective exit** (reference 7.4): R = round(route × capacityFactor × confidenceFactor), capacityFactor =
 *   clamp(immediate capacity USD / modelled exit size, 0, 1) with exit size min(max(5% of supply, $100K),
 *   $25M) (1 when unknown), confidence high 1, medium 0.75, low 0.35; with a DEX liquidity score L:
 *   round(min(100, max(L, R) + 0.1 × min(L, R))), the bonus only for independent issuer rails
 *   (`offchain-issuer`). DEX liquidity is not published yet, so L is null and the effective exit is R.
 *
 * Version: `REDEMPTION_BACKSTOP_VERSION` (./redemption-backstops.version.ts).
 */

export const ACCESS_SCORE = {
  "permissionless-onchain": 100,
  "whitelisted-onchain": 75,
  "issuer-api": 40,
  manual: 20,
} as const;
export const SETTLEMENT_SCORE = { atomic: 100, immediate: 90, "same-day": 65, days: 35, queued: 20 } as const;
export const EXECUTION_SCORE = {
  "deterministic-onchain": 100,
  "deterministic-basket": 80,
  "rules-based-nav": 60,
  opaque: 30,
} as const;
export const OUTPUT_SCORE = {
  "stable-single": 100,
  "stable-basket": 80,
  "bluechip-collateral": 65,
  "mixed-collateral": 45,
  nav: 20,
} as const;
export const COVERAGE_BREAKPOINTS: [number, number][] = [
  [0, 0],
  [0.01, 20],
  [0.05, 40],
  [0.1, 60],
  [0.25, 80],
  [0.5, 100],
];
export const ABSOLUTE_BREAKPOINTS: [number, number][] = [
  [0, 0],
  [1e5, 20],
  [1e6, 40],
  [1e7, 60],
  [5e7, 80],
  [2.5e8, 100],
];
export const SETTLEMENT_MULTIPLIER = { atomic: 1, immediate: 1, "same-day": 0.9, days: 0.75, queued: 0.6 } as const;
export const QUEUE_MULTIPLIER = 0.9;
export const ELIGIBILITY_MULTIPLIER = {
  any: 1,
  "verified-customer": 0.9,
  "whitelisted-primary": 0.85,
  "issuer-discretionary": 0.6,
} as const;
/** Cost score when the fee is not known (`undisclosed-reviewed`, or a governance-set fee read from chain). */
export const UNKNOWN_FEE_COST_SCORE = 50;
export const CONFIDENCE_FACTOR = { high: 1, medium: 0.75, low: 0.35 } as const;

type Confidence = keyof typeof CONFIDENCE_FACTOR;

/** Linear interpolation over breakpoints [x, score], clamped at both ends. */
export function interpolate(x: number, points: [number, number][]): number {
  if (x <= points[0][0]) return points[0][1];
  for (let i = 1; i < points.length; i++) {
    const [x0, y0] = points[i - 1];
    const [x1, y1] = points[i];
    if (x <= x1) return y0 + ((x - x0) / (x1 - x0)) * (y1 - y0);
  }
  return points[points.length - 1][1];
}

/**
 * Capacity score 0-100 (before rounding the blend) of an immediate capacity given as a share of supply
 * and/or in USD, times the route's constraint multipliers; null when neither side is known.
 */
export function capacityScore(
  ratio: number | null,
  usd: number | null,
  f: Pick<RedemptionFacts, "settlementModel" | "queueEnabled" | "minimumRedeemUsd" | "holderEligibility">,
): number | null {
  const coverage = ratio === null ? null : Math.round(interpolate(ratio, COVERAGE_BREAKPOINTS));
  const absolute = usd === null ? null : Math.round(interpolate(usd, ABSOLUTE_BREAKPOINTS));
  // A side that is not known takes the other side's value.
  const cov = coverage ?? absolute;
  const abs = absolute ?? coverage;
  if (cov === null || abs === null) return null;
  const base = Math.round(0.6 * cov + 0.4 * abs);
  let m = SETTLEMENT_MULTIPLIER[f.settlementModel] * ELIGIBILITY_MULTIPLIER[f.holderEligibility];
  if (f.queueEnabled) m *= QUEUE_MULTIPLIER;
  if (f.minimumRedeemUsd !== null && f.minimumRedeemUsd > 1e6) m *= 0.75;
  else if (f.minimumRedeemUsd !== null && f.minimumRedeemUsd > 1e4) m *= 0.9;
  return Math.round(base * m);
}

/** Cost score of a fee: max(0, 100 − bps), {@link UNKNOWN_FEE_COST_SCORE} when the fee is unknown. */
export function costScore(feeBps: number | null): number {
  return feeBps === null ? UNKNOWN_FEE_COST_SCORE : Math.max(0, 100 - feeBps);
}

/** Route score and the family cap applied; null score when capacity is null. */
export function routeScore(
  f: RedemptionFacts,
  capacity: number | null,
): { score: number | null; capsApplied: ("queue-route-cap" | "offchain-route-cap")[] } {
  if (capacity === null) return { score: null, capsApplied: [] };
  const w = COMPONENT_WEIGHTS;
  const raw =
    w.access * ACCESS_SCORE[f.accessModel] +
    w.settlement * SETTLEMENT_SCORE[f.settlementModel] +
    w.executionCertainty * EXECUTION_SCORE[f.executionModel] +
    w.capacity * capacity +
    w.outputAssetQuality * OUTPUT_SCORE[f.outputAssetType] +
    w.cost * costScore(f.fee.feeBps);
  const score = Math.round(Math.min(100, Math.max(0, raw)));
  const cap = (ROUTE_FAMILY_CAPS as Record<string, { max: number; cap: "queue-route-cap" | "offchain-route-cap" }>)[
    f.routeFamily
  ];
  if (cap && score > cap.max) return { score: cap.max, capsApplied: [cap.cap] };
  return { score, capsApplied: [] };
}

/**
 * Effective exit score (reference 7.4) from DEX liquidity `L` and route score `route` (each 0-100 or null),
 * the route's immediate capacity (USD, null = unknown), supply and model confidence.
 */
export function effectiveExitScore(
  L: number | null,
  route: number | null,
  o: {
    immediateCapacityUsd: number | null;
    supplyUsd: number | null;
    confidence: Confidence;
    independentIssuerRail: boolean;
  },
): number | null {
  const clamp = (x: number) => Math.min(100, Math.max(0, x));
  let R: number | null = null;
  if (route !== null) {
    const exitSize = Math.min(Math.max((o.supplyUsd ?? 0) * 0.05, 1e5), 2.5e7);
    const capacityFactor =
      o.immediateCapacityUsd === null ? 1 : Math.min(1, Math.max(0, o.immediateCapacityUsd / exitSize));
    R = Math.round(clamp(route) * capacityFactor * CONFIDENCE_FACTOR[o.confidence]);
  }
  const l = L === null ? null : clamp(L);
  if (l !== null && R !== null) {
    const bonus = o.independentIssuerRail ? EFFECTIVE_EXIT_WEIGHTS.secondaryBonus * Math.min(l, R) : 0;
    return Math.round(Math.min(100, Math.max(l, R) + bonus));
  }
  if (l !== null) return Math.round(l);
  return R;
}

/** Fee confidence of spec 2.12 from the curated fee model: fixed bps → `fixed`, a formula or documented variable fee → `formula`. */
export function feeConfidence(
  kind: RedemptionFacts["fee"]["feeModelKind"],
): "fixed" | "formula" | "undisclosed-reviewed" {
  return kind === "fixed-bps" ? "fixed" : kind === "undisclosed-reviewed" ? "undisclosed-reviewed" : "formula";
}

/**
 * Model confidence: `low` when impaired, or a heuristic capacity with an opaque execution or undisclosed fee;
 * `high` for a documented capacity bound with a known fee model and a deterministic execution; else `medium`.
 */
export function modelConfidence(f: RedemptionFacts, impaired: boolean): Confidence {
  if (impaired) return "low";
  const feeKnown = f.fee.feeModelKind !== "undisclosed-reviewed";
  if (f.capacity.kind === "documented-bound") return feeKnown && f.executionModel !== "opaque" ? "high" : "medium";
  return f.executionModel === "opaque" || !feeKnown ? "low" : "medium";
}

/** One published backstop entry (spec 2.12 fields, snake-free: the artifact maps it 1:1). */
export interface BackstopEntry {
  stablecoinId: string;
  score: number | null;
  effectiveExitScore: number | null;
  dexLiquidityScore: number | null;
  routeFamily: RedemptionFacts["routeFamily"];
  accessModel: RedemptionFacts["accessModel"];
  settlementModel: RedemptionFacts["settlementModel"];
  executionModel: RedemptionFacts["executionModel"];
  outputAssetType: RedemptionFacts["outputAssetType"];
  sourceMode: "static";
  resolutionState: "resolved" | "missing-cache" | "missing-capacity" | "failed";
  capacityConfidence: RedemptionFacts["capacity"]["kind"];
  capacityBasis: string;
  capacitySemantics: "immediate-bounded" | "eventual-only";
  feeConfidence: ReturnType<typeof feeConfidence>;
  feeModelKind: RedemptionFacts["fee"]["feeModelKind"];
  modelConfidence: Confidence;
  immediateCapacityUsd: number | null;
  immediateCapacityRatio: number | null;
  capacityScore: number | null;
  feeBps: number | null;
  feeDescription: string;
  queueEnabled: boolean;
  minimumRedeemUsd: number | null;
  holderEligibility: RedemptionFacts["holderEligibility"];
  docs: string[];
  notes: string;
  capsApplied: ("queue-route-cap" | "offchain-route-cap" | "config-cap")[];
  impairedReason: string | null;
  updatedAt: number;
  methodologyVersion: string;
}

/**
 * The backstop entry of one coin from its curated facts, current circulating USD (null when the coin has
 * no current supply), the worst open below-peg incident peak (|bps|, null when none) and its DEX
 * liquidity score (null until published), at `asOf`.
 */
export function backstopEntry(
  id: string,
  f: RedemptionFacts,
  o: { supplyUsd: number | null; openBelowPegBps: number | null; dexLiquidityScore: number | null; asOf: number },
): BackstopEntry {
  const { supplyUsd } = o;
  const ratio =
    f.capacity.immediateCapacityRatio ??
    (f.capacity.immediateCapacityUsd !== null && supplyUsd
      ? Math.min(1, f.capacity.immediateCapacityUsd / supplyUsd)
      : null);
  const usd =
    f.capacity.immediateCapacityUsd ??
    (f.capacity.immediateCapacityRatio !== null && supplyUsd !== null
      ? f.capacity.immediateCapacityRatio * supplyUsd
      : null);
  const capacity = capacityScore(ratio, usd, f);
  const impaired = o.openBelowPegBps !== null && o.openBelowPegBps >= SEVERE_DEPEG_BPS;
  const route = routeScore(f, capacity);
  const confidence = modelConfidence(f, impaired);
  const score = impaired ? null : route.score;
  const resolutionState = impaired
    ? "failed"
    : capacity === null
      ? "missing-capacity"
      : supplyUsd === null
        ? "missing-cache"
        : "resolved";
  return {
    stablecoinId: id,
    score,
    effectiveExitScore: effectiveExitScore(o.dexLiquidityScore, score, {
      immediateCapacityUsd: usd,
      supplyUsd,
      confidence,
      independentIssuerRail: f.routeFamily === "offchain-issuer",
    }),
    dexLiquidityScore: o.dexLiquidityScore,
    routeFamily: f.routeFamily,
    accessModel: f.accessModel,
    settlementModel: f.settlementModel,
    executionModel: f.executionModel,
    outputAssetType: f.outputAssetType,
    sourceMode: "static",
    resolutionState,
    capacityConfidence: f.capacity.kind,
    capacityBasis: f.capacity.basis,
    capacitySemantics:
      f.settlementModel === "days" || f.settlementModel === "queued" || f.queueEnabled
        ? "eventual-only"
        : "immediate-bounded",
    feeConfidence: feeConfidence(f.fee.feeModelKind),
    feeModelKind: f.fee.feeModelKind,
    modelConfidence: confidence,
    immediateCapacityUsd: usd === null ? null : Math.round(usd),
    immediateCapacityRatio: ratio === null ? null : Math.round(ratio * 1e6) / 1e6,
    capacityScore: capacity,
    feeBps: f.fee.feeBps,
    feeDescription: f.fee.feeDescription,
    queueEnabled: f.queueEnabled,
    minimumRedeemUsd: f.minimumRedeemUsd,
    holderEligibility: f.holderEligibility,
    docs: f.docs,
    notes: f.notes,
    capsApplied: impaired ? [] : route.capsApplied,
    impairedReason: impaired
      ? `open below-peg depeg incident at ${o.openBelowPegBps} bps (≥ ${SEVERE_DEPEG_BPS})`
      : null,
    updatedAt: o.asOf,
    methodologyVersion: REDEMPTION_BACKSTOP_VERSION,
  };
}

/**
 * DAG node `redemption_backstops` (marts layer): one row per registry coin with curated redemption facts
 * that is not dead at as-of, its entry as JSON. `dexLiquidityScore` is the coin's DEX liquidity score
 * (`dex_liquidity`) when a pool capture rated it, else null (the effective exit is then the redemption
 * side alone).
 */
/** Input rows of the redemption backstops node (columns of its selects). */
interface RedemptionBackstopsInputs {
  coins: { id: string; redemption_json: string; circulating_usd: number | null };
  incidents: { stablecoin_id: string; worst_bps: number };
  dex: { stablecoin_id: string; score: number };
}

export const redemptionBackstops: Analytic = {
  name: "redemption_backstops",
  layer: "marts",
  inputs: {
    coins: `select c.id, c.redemption_json, s.circulating_usd
        from registry_coins c left join int_coins_supply_current s on s.stablecoin_id = c.id
        where c.redemption_json is not null and not c.is_dead order by c.id`,
    incidents: `select i.stablecoin_id, max(abs(i.peak_deviation_bps))::integer as worst_bps
        from depeg_incidents i inner join registry_coins c on c.id = i.stablecoin_id
        where c.redemption_json is not null and i.ended_at is null and i.peak_deviation_bps < 0 and i.started_at <= (select as_of from build_context)
        group by i.stablecoin_id order by i.stablecoin_id`,
    dex: "select stablecoin_id, round(liquidity_score)::integer as score from dex_liquidity where liquidity_score is not null order by stablecoin_id",
  },
  outputs: {
    redemption_backstops: {
      stablecoin_id: "VARCHAR",
      score: "BIGINT",
      effective_exit_score: "BIGINT",
      route_family: "VARCHAR",
      resolution_state: "VARCHAR",
      model_confidence: "VARCHAR",
      immediate_capacity_usd: "DOUBLE",
      immediate_capacity_ratio: "DOUBLE",
      entry_json: "VARCHAR",
      methodology_version: "VARCHAR",
    },
  },
  run(selected, { asOf }) {
    const inputs = inputsAs<RedemptionBackstopsInputs>(selected);
    const worst = new Map(inputs.incidents.map((r) => [r.stablecoin_id, r.worst_bps]));
    const dex = new Map(inputs.dex.map((r) => [r.stablecoin_id, r.score]));
    const rows = inputs.coins.map((c) => {
      const e = backstopEntry(c.id, JSON.parse(c.redemption_json), {
        supplyUsd: c.circulating_usd ?? null,
        openBelowPegBps: worst.get(c.id) ?? null,
        dexLiquidityScore: dex.get(c.id) ?? null,
        asOf,
      });
      return {
        stablecoin_id: c.id,
        score: e.score,
        effective_exit_score: e.effectiveExitScore,
        route_family: e.routeFamily,
        resolution_state: e.resolutionState,
        model_confidence: e.modelConfidence,
        immediate_capacity_usd: e.immediateCapacityUsd,
        immediate_capacity_ratio: e.immediateCapacityRatio,
        entry_json: JSON.stringify(e),
        methodology_version: REDEMPTION_BACKSTOP_VERSION,
      };
    });
    return { tables: { redemption_backstops: rows } };
  },
};
