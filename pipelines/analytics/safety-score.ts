/**
 * Safety scores and report cards: pure functions from one coin's `rawInputs` (and its upstream
 * coins' scores, which `rawInputs.dependencies` carries) to its grades. Two models over the same
 * inputs, each versioned with a changelog (`pipelines/analytics/changelogs/`):
 *
 * - **Safety score** (`ballast-safety-score-v2`, `/api/safety-grades`, `/api/report-cards/v9`): three
 *   pillars — Backing 40% (collateral risk 50%, custody 25%, proof of reserves 25%), Exit 35% (the better
 *   of redemption route and market depth, plus a tenth of the other), Economic control 25% (governance 60%,
 *   home-chain infrastructure 40%) — times the peg multiplier `(pegScore/100)^0.4`, then dependency
 *   exposure, active-depeg caps and the limited-evidence ceiling.
 * - **Legacy report card** (`ballast-report-card-v2`, `/api/report-cards`, spec 2.11): five dimensions
 *   (pegStability as multiplier; liquidity 0.30 = effective exit; resilience 0.20; decentralization 0.15;
 *   dependencyRisk 0.25), the overall rule of the reference's five-dimension model.
 *
 * Rules shared by both:
 * - NR when a required input is missing, with the missing inputs named: no curated risk facts in the
 *   registry, no price at all (`no-price`) or no current price (`no-current-price`). Never a guessed grade.
 *   This holds for NAV tokens and floating pegs too (v2): they need no peg score, but a coin whose price
 *   is null at as-of (`hasCurrentPrice` false) is NR with `price (no-current-price)` (or `no-price`).
 *   A peg score of 0 gives F 0 with or without the other inputs (the multiplier is 0, so they cannot matter).
 * - Peg: NAV tokens and floating pegs with a current price have no peg score; their multiplier is 1. A coin with a current
 *   price but fewer than 30 priced days (`insufficient-history`) has multiplier 1 and its overall is
 *   capped at 80 (A−): a grade above A− needs a peg track record.
 * - Active depeg caps (open incident peak, or the current deviation when beyond the threshold):
 *   |bps| ≥ 2500 → ≤ 39 (F); ≥ 1000 → ≤ 49 (D).
 * - Defunct coins (registry death known at as-of): every dimension F/0, overall F 0.
 * - Grades from the score (first match): A+ 87, A 83, A− 80, B+ 75, B 70, B− 65, C+ 60, C 55, C− 50, D 40, F 0.
 *
 * Versions, the grade scale, fact score tables, published weights and caps, and the shapes of `rawInputs`
 * and the results: ./safety-score.version.ts (what readers outside the analytic import).
 */
import { must } from "../../lib/must.ts";
import {
  ACTIVE_DEPEG_CAPS,
  CHAIN_TIER_SCORE,
  COLLATERAL_SCORE,
  CONTROL_SCORE,
  CUSTODY_SCORE,
  type DependencyInput,
  DEPLOYMENT_MULTIPLIER,
  type Dimension,
  GOVERNANCE_QUALITY,
  GRADE_THRESHOLDS,
  type Grade,
  LEGACY_WEIGHTS,
  type LegacyCard,
  LIMITED_EVIDENCE_CEILING,
  NO_LIQUIDITY_PENALTY,
  PEG_MULTIPLIER_EXPONENT,
  PILLAR_WEIGHTS,
  PROOF_SCORE,
  type RawInputs,
  REDEMPTION_ROUTE,
  type SafetyScore,
  UNRATED_UPSTREAM_SCORE,
} from "./safety-score.version.ts";

/** Grade of a 0-100 score (clamped); null → `NR`. */
export function gradeOf(score: number | null): Grade {
  if (score === null) return "NR";
  const s = Math.min(100, Math.max(0, score));
  // The last threshold is 0, so every clamped score finds one (a NaN score does not).
  return must(
    GRADE_THRESHOLDS.find((t) => s >= t.min),
    `grade threshold of score ${score}`,
  ).grade;
}

/** Rank of a grade for comparisons: NR −1, F 0, D 1, C− 2 … A+ 10. */
export function gradeRank(g: Grade): number {
  return g === "NR" ? -1 : GRADE_THRESHOLDS.length - 1 - GRADE_THRESHOLDS.findIndex((t) => t.grade === g);
}

/** Legacy dependency risk of a self-backed coin by governance class. */
const SELF_BACKED = { decentralized: 90, "centralized-dependent": 75, centralized: 95 } as const;
/** Points a wrapper dependency's ceiling sits below its upstream's score. */
const WRAPPER_PENALTY = 3;
/** A peg score of 0 makes the multiplier 0: the score is 0 whatever the other inputs, so it needs none of them. */
const ZERO_PEG = "peg score 0: score 0 whatever the other inputs";

/** Curated fact names a grade needs (the registry `risk` block). */
export const REQUIRED_FACTS = [
  "backing",
  "collateralQuality",
  "custodyModel",
  "proofOfReserves",
  "governanceTier",
  "chainTier",
  "deploymentModel",
] as const;

/**
 * Effective exit (0-100), the reference's exit rule (methodology 7.4): exit = round(min(100, max(L, R) +
 * 0.1 × min(L, R))). L = the DEX liquidity score when published (`ballast-dex-liquidity-v1`), else market
 * depth 20 × log10(circulating USD / $1M) (clamped 0-100) as a proxy of secondary-market liquidity; R =
 * the redemption backstop score when published (`ballast-redemption-backstop-v1`), else the redemption
 * route of the backing ({@link REDEMPTION_ROUTE}). Null without backing facts, or without both a DEX
 * score and circulating supply.
 */
export function effectiveExitScore(
  backing: RawInputs["backing"],
  circulatingUsd: number | null,
  liquidityScore: number | null = null,
  redemptionScore: number | null = null,
): number | null {
  if (backing === null) return null;
  const depth =
    liquidityScore ??
    (circulatingUsd !== null && circulatingUsd > 0
      ? Math.min(100, Math.max(0, 20 * Math.log10(circulatingUsd / 1e6)))
      : null);
  if (depth === null) return null;
  const route = redemptionScore ?? REDEMPTION_ROUTE[backing].score;
  return Math.round(Math.min(100, Math.max(depth, route) + 0.1 * Math.min(depth, route)));
}

/** Infrastructure score of the home chain: round(tier × deployment multiplier). */
function chainInfra(r: RawInputs): number | null {
  return r.chainTier && r.deploymentModel
    ? Math.round(CHAIN_TIER_SCORE[r.chainTier] * DEPLOYMENT_MULTIPLIER[r.deploymentModel])
    : null;
}

const dim = (score: number | null, detail: string): Dimension => ({ grade: gradeOf(score), score, detail });
const clampRound = (x: number) => Math.min(100, Math.max(0, Math.round(x)));
const missingFacts = (r: RawInputs) => REQUIRED_FACTS.filter((k) => r[k] === null);

/** Peg evidence: multiplier, ceiling, and NR reasons. */
function pegEvidence(r: RawInputs): {
  multiplier: number | null;
  ceiling: number | null;
  missing: string[];
  note: string;
} {
  if ((r.navToken || r.floatingPeg) && !r.hasCurrentPrice) {
    const reason = r.pricedDays === 0 ? "no-price" : "no-current-price";
    return { multiplier: null, ceiling: null, missing: [`price (${reason})`], note: `no current price (${reason})` };
  }
  if (r.navToken || r.floatingPeg)
    return {
      multiplier: 1,
      ceiling: null,
      missing: [],
      note: r.navToken ? "NAV token: not judged against par" : "floating peg: no fixed target",
    };
  if (r.pegScore !== null)
    return {
      multiplier: (r.pegScore / 100) ** PEG_MULTIPLIER_EXPONENT,
      ceiling: null,
      missing: [],
      note: `peg score ${r.pegScore}`,
    };
  if (r.pegScoreUnavailableReason === "insufficient-history") {
    return {
      multiplier: 1,
      ceiling: LIMITED_EVIDENCE_CEILING,
      missing: [],
      note: `limited peg history (${r.pricedDays} priced days < 30): capped at ${LIMITED_EVIDENCE_CEILING}`,
    };
  }
  return {
    multiplier: null,
    ceiling: null,
    missing: [`pegScore (${r.pegScoreUnavailableReason ?? "missing"})`],
    note: `no peg evidence (${r.pegScoreUnavailableReason ?? "missing"})`,
  };
}

/** Active-depeg cap, or null. */
function activeCap(r: RawInputs): { max: number; reason: string } | null {
  const bps = r.activeDepegBps === null ? 0 : Math.abs(r.activeDepegBps);
  if (bps >= ACTIVE_DEPEG_CAPS.f.bps)
    return { max: ACTIVE_DEPEG_CAPS.f.max, reason: `active depeg ${bps} bps ≥ ${ACTIVE_DEPEG_CAPS.f.bps}` };
  if (bps >= ACTIVE_DEPEG_CAPS.d.bps)
    return { max: ACTIVE_DEPEG_CAPS.d.max, reason: `active depeg ${bps} bps ≥ ${ACTIVE_DEPEG_CAPS.d.bps}` };
  return null;
}

/**
 * Safety score (`ballast-safety-score-v2`) of one coin from its raw inputs. Pure; never throws.
 * Dependencies: score = (1 − W)·s + Σ wᵢ·min(s, upᵢ) over collateral/custody/bridge dependencies
 * (W = Σ wᵢ ≤ 1; an unrated upstream counts {@link UNRATED_UPSTREAM_SCORE}); a wrapper dependency caps
 * at upstream − 3 and a mechanism dependency at upstream, whatever its weight.
 */
export function safetyScore(r: RawInputs): SafetyScore {
  const nr = (missing: string[], pillars: SafetyScore["pillars"]): SafetyScore => ({
    score: null,
    grade: "NR",
    pillars,
    baseScore: null,
    pegMultiplier: null,
    caps: [],
    missingInputs: missing,
  });
  if (r.isDefunct) {
    const f = dim(0, "defunct");
    return {
      score: 0,
      grade: "F",
      pillars: { backing: f, exit: f, economicControl: f },
      baseScore: 0,
      pegMultiplier: null,
      caps: ["defunct"],
      missingInputs: [],
    };
  }
  const backing =
    r.collateralQuality && r.custodyModel && r.proofOfReserves
      ? dim(
          clampRound(
            0.5 * COLLATERAL_SCORE[r.collateralQuality] +
              0.25 * CUSTODY_SCORE[r.custodyModel] +
              0.25 * PROOF_SCORE[r.proofOfReserves],
          ),
          `collateral ${r.collateralQuality} risk, custody ${r.custodyModel}, proof of reserves ${r.proofOfReserves}`,
        )
      : dim(null, "no curated backing facts");
  const exit =
    r.effectiveExitScore !== null
      ? dim(
          r.effectiveExitScore,
          `redemption route ${r.redemptionRouteFamily}, market depth $${Math.round((r.circulatingUsd ?? 0) / 1e6)}M circulating`,
        )
      : dim(null, r.backing === null ? "no curated backing facts" : "no circulating supply");
  const infra = chainInfra(r);
  const control =
    r.governanceTier && infra !== null
      ? dim(
          clampRound(0.6 * CONTROL_SCORE[r.governanceTier] + 0.4 * infra),
          `governance ${r.governanceTier}, chain ${r.chainTier} ${r.deploymentModel}`,
        )
      : dim(null, "no curated governance or chain facts");
  const pillars = { backing, exit, economicControl: control };
  const peg = pegEvidence(r);
  const missing = [
    ...missingFacts(r),
    ...(r.effectiveExitScore === null && r.backing !== null ? ["circulatingUsd"] : []),
    ...peg.missing,
  ];
  if (peg.multiplier === 0)
    return { score: 0, grade: "F", pillars, baseScore: null, pegMultiplier: 0, caps: [ZERO_PEG], missingInputs: [] };
  if (
    missing.length ||
    backing.score === null ||
    exit.score === null ||
    control.score === null ||
    peg.multiplier === null
  )
    return nr(missing, pillars);
  const base =
    PILLAR_WEIGHTS.backing * backing.score +
    PILLAR_WEIGHTS.exit * exit.score +
    PILLAR_WEIGHTS.economicControl * control.score;
  let s = base * peg.multiplier;
  const caps: string[] = [];
  s = applyDependencies(s, r.dependencies, (d) => d.upstreamSafetyScore, caps);
  const cap = activeCap(r);
  if (cap && s > cap.max) {
    s = cap.max;
    caps.push(cap.reason);
  }
  if (peg.ceiling !== null && s > peg.ceiling) {
    s = peg.ceiling;
    caps.push(peg.note);
  }
  const score = clampRound(s);
  return {
    score,
    grade: gradeOf(score),
    pillars,
    baseScore: Math.round(base * 10) / 10,
    pegMultiplier: Math.round(peg.multiplier * 1e4) / 1e4,
    caps,
    missingInputs: [],
  };
}

/** Dependency exposure (see {@link safetyScore}); records binding ceilings in `caps`. */
function applyDependencies(
  s: number,
  deps: DependencyInput[],
  up: (d: DependencyInput) => number | null,
  caps: string[],
): number {
  const exposure = deps.filter((d) => d.type !== "wrapper" && d.type !== "mechanism");
  const w = exposure.reduce((a, d) => a + d.weight, 0);
  let out =
    (1 - Math.min(1, w)) * s +
    exposure.reduce((a, d) => a + (d.weight / Math.max(1, w)) * Math.min(s, up(d) ?? UNRATED_UPSTREAM_SCORE), 0);
  for (const d of deps.filter((x) => x.type === "wrapper" || x.type === "mechanism")) {
    const ceiling = Math.max(0, (up(d) ?? UNRATED_UPSTREAM_SCORE) - (d.type === "wrapper" ? WRAPPER_PENALTY : 0));
    if (out > ceiling) {
      out = ceiling;
      caps.push(`${d.type} dependency ${d.id}: ≤ ${ceiling}`);
    }
  }
  return out;
}

/**
 * Legacy five-dimension card (`ballast-report-card-v2`). Pure. Overall = weighted mean of the rated
 * non-peg dimensions (renormalised; fewer than 2 rated → NR) × peg multiplier, × 0.9 when liquidity is
 * NR, active-depeg caps, the limited-evidence ceiling; `ratedDimensions` = rated base dimensions + 1
 * when the peg is rated.
 */
export function legacyCard(r: RawInputs): LegacyCard {
  const keys = Object.keys(LEGACY_WEIGHTS) as (keyof typeof LEGACY_WEIGHTS)[];
  if (r.isDefunct) {
    return {
      overallScore: 0,
      overallGrade: "F",
      baseScore: 0,
      dimensions: Object.fromEntries(keys.map((k) => [k, dim(0, "defunct")])) as LegacyCard["dimensions"],
      ratedDimensions: 5,
      missingInputs: [],
    };
  }
  const peg = pegEvidence(r);
  const pegStability =
    r.pegScore !== null ? dim(Math.round(r.pegScore), `peg score ${r.pegScore}`) : dim(null, peg.note);
  const liquidity =
    r.effectiveExitScore !== null
      ? dim(r.effectiveExitScore, "effective exit: redemption route and market depth (no DEX liquidity data yet)")
      : dim(null, "No DEX liquidity data");
  const resilience =
    r.collateralQuality && r.custodyModel
      ? dim(
          Math.round((COLLATERAL_SCORE[r.collateralQuality] + CUSTODY_SCORE[r.custodyModel]) / 2),
          `collateral ${r.collateralQuality} risk, custody ${r.custodyModel}`,
        )
      : dim(null, "no curated collateral or custody facts");
  const infra = chainInfra(r);
  let decentralization = dim(null, "no curated governance or chain facts");
  if (r.governanceTier && infra !== null) {
    const penalty =
      r.governanceTier === "dao-governance" || r.governanceTier === "multisig"
        ? infra >= 80
          ? 0
          : infra >= 60
            ? 10
            : infra >= 40
              ? 25
              : infra >= 20
                ? 40
                : 60
        : 0;
    decentralization = dim(
      clampRound(GOVERNANCE_QUALITY[r.governanceTier] - penalty),
      `governance ${r.governanceTier}${penalty ? `, chain infrastructure −${penalty}` : ""}`,
    );
  }
  let dependencyRisk = dim(null, "no curated dependency facts");
  if (r.governanceTier !== null) {
    const selfScore =
      SELF_BACKED[
        r.governanceTier === "dao-governance" || r.governanceTier === "immutable-code"
          ? "decentralized"
          : r.governanceTier === "multisig" || r.governanceTier === "wrapper"
            ? "centralized-dependent"
            : "centralized"
      ];
    if (!r.dependencies.length) dependencyRisk = dim(selfScore, "self-backed");
    else {
      const raw = r.dependencies.reduce((a, d) => a + d.weight, 0);
      const norm = Math.max(raw, 1);
      const ups = r.dependencies.map((d) => d.upstreamReportCardScore ?? UNRATED_UPSTREAM_SCORE);
      let s =
        r.dependencies.reduce((a, d, i) => a + (ups[i] * d.weight) / norm, 0) + (1 - Math.min(1, raw)) * selfScore;
      if (ups.some((u) => u < 75)) s -= 10;
      for (const [i, d] of r.dependencies.entries()) {
        if (d.type === "wrapper") s = Math.min(s, ups[i] - WRAPPER_PENALTY);
        if (d.type === "mechanism") s = Math.min(s, ups[i]);
      }
      dependencyRisk = dim(
        clampRound(s),
        `depends on ${r.dependencies.map((d) => `${d.id} (${d.type}, ${d.weight})`).join(", ")}`,
      );
    }
  }
  const dimensions = { pegStability, liquidity, resilience, decentralization, dependencyRisk };
  const base = keys.filter((k) => k !== "pegStability" && dimensions[k].score !== null);
  const ratedDimensions = base.length + (pegStability.score !== null ? 1 : 0);
  const missing = [...missingFacts(r), ...peg.missing];
  if (peg.multiplier === 0)
    return { overallScore: 0, overallGrade: "F", baseScore: null, dimensions, ratedDimensions, missingInputs: [] };
  if (base.length < 2 || peg.multiplier === null) {
    return {
      overallScore: null,
      overallGrade: "NR",
      baseScore: null,
      dimensions,
      ratedDimensions,
      missingInputs: missing.length ? missing : ["fewer than 2 rated dimensions"],
    };
  }
  const wsum = base.reduce((a, k) => a + LEGACY_WEIGHTS[k], 0);
  // `base` holds only dimensions with a score.
  const baseScore =
    base.reduce((a, k) => {
      const score = dimensions[k].score;
      return score === null ? a : a + LEGACY_WEIGHTS[k] * score;
    }, 0) / wsum;
  let s = baseScore * peg.multiplier;
  if (liquidity.score === null) s *= NO_LIQUIDITY_PENALTY;
  const cap = activeCap(r);
  if (cap) s = Math.min(s, cap.max);
  if (peg.ceiling !== null) s = Math.min(s, peg.ceiling);
  const overallScore = clampRound(s);
  return {
    overallScore,
    overallGrade: gradeOf(overallScore),
    baseScore: Math.round(baseScore * 10) / 10,
    dimensions,
    ratedDimensions,
    missingInputs: missing,
  };
}

/** Ids in dependency order (upstream before dependent); members of a cycle come last, in id order. */
export function dependencyOrder(nodes: { id: string; deps: string[] }[]): string[] {
  const out: string[] = [];
  const done = new Set<string>();
  let pending = [...nodes].sort((a, b) => (a.id < b.id ? -1 : 1));
  while (pending.length) {
    const ready = pending.filter((n) => n.deps.every((d) => done.has(d) || d === n.id));
    const take = ready.length ? ready : [pending[0]];
    for (const n of take) {
      out.push(n.id);
      done.add(n.id);
    }
    pending = pending.filter((n) => !done.has(n.id));
  }
  return out;
}
