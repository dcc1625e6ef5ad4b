import { z } from "zod";
import {
  ACTIVE_DEPEG_CAPS,
  CHAIN_TIER_SCORE,
  COLLATERAL_SCORE,
  CUSTODY_SCORE,
  DEPLOYMENT_MULTIPLIER,
  GOVERNANCE_QUALITY,
  GRADE_THRESHOLDS,
  GRADES,
  LEGACY_WEIGHTS,
  type LegacyCard,
  LIMITED_EVIDENCE_CEILING,
  NO_LIQUIDITY_PENALTY,
  PEG_MULTIPLIER_EXPONENT,
  PILLAR_WEIGHTS,
  PROOF_SCORE,
  type RawInputs,
  REDEMPTION_ROUTE,
  REPORT_CARD_VERSION,
  SAFETY_SCORE_VERSION,
  type SafetyScore,
  UNRATED_UPSTREAM_SCORE,
} from "../pipelines/analytics/safety-score.version.ts";
import { type ArtifactContext, buildTimeModule, num, requiredNum, sqlArtifact } from "./contract.ts";
import { methodology, MethodologySchema } from "./peg-summary.ts";
import { must } from "../lib/must.ts";

/** Letter grade `A+` … `F`, or `NR` (not rated: a required input is missing). */
export const GradeSchema = z.enum(GRADES);
const Score = z.number().int().min(0).max(100);

/** One dimension or pillar: grade, score 0-100 (null when NR) and a one-line reason. */
export const DimensionSchema = z.object({ grade: GradeSchema, score: Score.nullable(), detail: z.string() });

/**
 * Nullable enum of a score map's keys (pipelines/analytics/safety-score.version.ts): one declaration of each
 * fact's values.
 */
const factEnum = <T extends Record<string, unknown>>(scores: T) =>
  z.enum(Object.keys(scores) as [keyof T & string, ...(keyof T & string)[]]).nullable();
/**
 * Every input of a coin's grades (spec 2.11 names plus the facts the models read): scores 0-100, bps,
 * Unix s, USD. Feeding it to `safetyScore`/`legacyCard` (pipelines/analytics/safety-score.ts)
 * reproduces the published grades. Inputs not produced yet (DEX liquidity, redemption capacity, HHI) are
 * null; `bluechipGrade` is the matched Bluechip grade when a capture exists (descriptive, not scored).
 */
export const RawInputsSchema = z.object({
  pegScore: Score.nullable(),
  pegScoreUnavailableReason: z.string().nullable(),
  pricedDays: z.number().int(),
  hasCurrentPrice: z
    .boolean()
    .describe(
      "Whether the coin had a current price at as-of; false makes every grade NR (NAV tokens and floating pegs included)",
    ),
  activeDepeg: z.boolean(),
  activeDepegBps: z.number().int().nullable(),
  currentDeviationBps: z.number().int().nullable(),
  depegEventCount: z.number().int(),
  lastEventAt: z.number().int().nullable(),
  circulatingUsd: z.number().nullable(),
  liquidityScore: Score.nullable(),
  effectiveExitScore: Score.nullable(),
  redemptionBackstopScore: Score.nullable(),
  redemptionRouteFamily: z.string().nullable(),
  redemptionModelConfidence: z.string().nullable(),
  redemptionUsedForLiquidity: z.boolean(),
  redemptionImmediateCapacityUsd: z.number().nullable(),
  redemptionImmediateCapacityRatio: z.number().nullable(),
  concentrationHhi: z.number().nullable(),
  bluechipGrade: z.string().nullable(),
  canBeBlacklisted: z.union([z.boolean(), z.enum(["possible", "inherited"])]).nullable(),
  chainTier: factEnum(CHAIN_TIER_SCORE),
  deploymentModel: factEnum(DEPLOYMENT_MULTIPLIER),
  backing: factEnum(REDEMPTION_ROUTE),
  collateralQuality: factEnum(COLLATERAL_SCORE),
  custodyModel: factEnum(CUSTODY_SCORE),
  proofOfReserves: factEnum(PROOF_SCORE),
  governanceTier: factEnum(GOVERNANCE_QUALITY),
  governanceQuality: Score.nullable(),
  dependencies: z.array(
    z.object({
      id: z.string(),
      weight: z.number().min(0).max(1),
      type: z.enum(["collateral", "custody", "bridge", "wrapper", "mechanism"]),
      upstreamSafetyScore: Score.nullable(),
      upstreamReportCardScore: Score.nullable(),
    }),
  ),
  navToken: z.boolean(),
  floatingPeg: z.boolean(),
  isDefunct: z.boolean(),
});

const ThresholdsSchema = z.array(z.object({ grade: GradeSchema, min: z.number() }));
/** `published`, or `held` when the grades' price inputs are older than 48 h at as-of (served `no-store`). */
const PublicationSchema = z.object({
  status: z.enum(["published", "held"]),
  reason: z.string().nullable(),
  asOf: z.number().int(),
});
const CoverageSchema = z.enum(["full", "limited-peg-history", "unrated", "defunct"]);

/** Legacy report card (spec 2.11). */
export const ReportCardSchema = z.object({
  id: z.string(),
  name: z.string(),
  symbol: z.string(),
  overallGrade: GradeSchema,
  overallScore: Score.nullable(),
  baseScore: z.number().nullable(),
  dimensions: z.object({
    pegStability: DimensionSchema,
    liquidity: DimensionSchema,
    resilience: DimensionSchema,
    decentralization: DimensionSchema,
    dependencyRisk: DimensionSchema,
  }),
  ratedDimensions: z.number().int().min(0).max(5),
  dependencies: z
    .array(z.object({ id: z.string(), weight: z.number() }))
    .refine((d) => d.reduce((a, x) => a + x.weight, 0) <= 1 + 1e-9, "dependency weights sum above 1"),
  missingInputs: z.array(z.string()),
  rawInputs: RawInputsSchema,
  isDefunct: z.boolean(),
});
const EdgeSchema = z.object({
  from: z.string(),
  to: z.string(),
  weight: z.number(),
  type: z.enum(["collateral", "custody", "bridge", "wrapper", "mechanism"]),
});
export const ReportCardsPayloadSchema = z.object({
  cards: z.array(ReportCardSchema),
  dependencyGraph: z.object({ edges: z.array(EdgeSchema) }),
  methodology: z.object({
    version: z.string(),
    weights: z.object({
      pegStability: z.number(),
      liquidity: z.number(),
      resilience: z.number(),
      decentralization: z.number(),
      dependencyRisk: z.number(),
    }),
    pegMultiplierExponent: z.number(),
    noLiquidityPenalty: z.number(),
    activeDepegCaps: z.object({
      d: z.object({ bps: z.number(), max: z.number() }),
      f: z.object({ bps: z.number(), max: z.number() }),
    }),
    limitedEvidenceCeiling: z.number(),
    thresholds: ThresholdsSchema,
    changelogPath: z.string(),
  }),
  updatedAt: z.number().int(),
});

/** Safety score card (current model, `/api/report-cards/v9`). */
export const SafetyCardSchema = z.object({
  id: z.string(),
  name: z.string(),
  symbol: z.string(),
  grade: GradeSchema,
  score: Score.nullable(),
  baseScore: z.number().nullable(),
  pegMultiplier: z.number().nullable(),
  pillars: z.object({ backing: DimensionSchema, exit: DimensionSchema, economicControl: DimensionSchema }),
  caps: z.array(z.string()),
  missingInputs: z.array(z.string()),
  coverageClass: CoverageSchema,
  rawInputs: RawInputsSchema,
  isDefunct: z.boolean(),
  methodologyVersion: z.string(),
});
export const ReportCardsV9PayloadSchema = z.object({
  cards: z.array(SafetyCardSchema),
  methodology: MethodologySchema.extend({
    pillarWeights: z.object({ backing: z.number(), exit: z.number(), economicControl: z.number() }),
    pegMultiplierExponent: z.number(),
    limitedEvidenceCeiling: z.number(),
    unratedUpstreamScore: z.number(),
    thresholds: ThresholdsSchema,
  }),
  publication: PublicationSchema,
  updatedAt: z.number().int(),
});

/** `/api/safety-grades`: one row per listed coin. */
export const SafetyGradesPayloadSchema = z.object({
  grades: z.array(
    z.object({
      id: z.string(),
      symbol: z.string(),
      name: z.string(),
      grade: GradeSchema,
      score: Score.nullable(),
      coverageClass: CoverageSchema,
      missingInputs: z.array(z.string()),
      methodologyVersion: z.string(),
      publicationStatus: z.enum(["published", "held"]),
    }),
  ),
  methodology: MethodologySchema,
  publication: PublicationSchema,
  updatedAt: z.number().int(),
});

/** One published history row (spec 2.13) plus the identity of the publication it came from (v2). */
export const SafetyHistoryRowSchema = z.object({
  date: z.number().int(),
  grade: GradeSchema,
  score: Score.nullable(),
  prevGrade: GradeSchema.nullable(),
  prevScore: Score.nullable(),
  methodologyVersion: z.string(),
  publication: z.object({
    kind: z.enum(["backfill", "published"]),
    methodologyVersion: z.string(),
    computedAsOf: z.number().int(),
  }),
});
export const SafetyHistorySchema = z.array(SafetyHistoryRowSchema);

export const DependencyGraphPayloadSchema = z.object({
  nodes: z.array(z.object({ id: z.string(), symbol: z.string(), grade: GradeSchema, score: Score.nullable() })),
  edges: z.array(EdgeSchema),
  methodology: MethodologySchema,
  updatedAt: z.number().int(),
});
const ScoreGradeSchema = z.object({ score: Score.nullable(), grade: GradeSchema });
export const DependencyScenariosPayloadSchema = z.object({
  scenarios: z.array(
    z.object({
      id: z.string(),
      upstream: z.object({ id: z.string(), symbol: z.string() }).merge(ScoreGradeSchema),
      shock: ScoreGradeSchema,
      assumptions: z.array(z.string()),
      impacts: z.array(
        z.object({
          id: z.string(),
          symbol: z.string(),
          depth: z.number().int().min(1),
          before: ScoreGradeSchema,
          after: ScoreGradeSchema,
        }),
      ),
    }),
  ),
  methodology: MethodologySchema,
  updatedAt: z.number().int(),
});

type CardRow = {
  id: string;
  symbol: string;
  name: string;
  safety: SafetyScore;
  legacy: LegacyCard;
  raw: RawInputs;
  coverage: z.infer<typeof CoverageSchema>;
};
type Edge = z.infer<typeof EdgeSchema>;
/**
 * The single row of report_cards.sql, read by every artifact of this module but the score history:
 * `cards` (report_cards rows by id, grades and raw inputs as JSON text), `edges` (dependency_edges rows by
 * from, to, type) and `newest_price_at` (Unix s as a BIGINT string, null without a current price).
 */
type ReportCardsRow = {
  cards: Record<string, unknown>[];
  edges: Record<string, unknown>[];
  newest_price_at: unknown;
};
const cardsOf = (rows: Record<string, unknown>[]): CardRow[] =>
  rows.map((r) => ({
    id: String(r.stablecoin_id),
    symbol: String(r.symbol),
    name: String(r.name),
    safety: JSON.parse(String(r.safety_json)),
    legacy: JSON.parse(String(r.report_card_json)),
    raw: JSON.parse(String(r.raw_inputs_json)),
    coverage: r.coverage_class as z.infer<typeof CoverageSchema>,
  }));
const dataAsOf = (_payload: unknown, ctx: ArtifactContext) => ctx.sourceObservedAt["defillama.stablecoins"] ?? null;
const SAFETY_LABEL = "Safety score v2 (backing, exit, economic control; NR without a current price)";
const HELD_AFTER_SEC = 48 * 3600;

/**
 * Publication status of the grades from the newest current-price observation among listed coins
 * (`newestPriceAt`, Unix s; null when there is none): held when it is missing or older than 48 h at
 * `asOf`, else published.
 */
export function publicationStatus(newestPriceAt: number | null, asOf: number): z.infer<typeof PublicationSchema> {
  if (newestPriceAt === null) return { status: "held", reason: "no current price observations", asOf };
  if (asOf - newestPriceAt > HELD_AFTER_SEC)
    return {
      status: "held",
      reason: `newest current price is ${Math.floor((asOf - newestPriceAt) / 3600)} h older than as-of (> 48 h)`,
      asOf,
    };
  return { status: "published", reason: null, asOf };
}
const publicationOf = (row: ReportCardsRow, asOf: number) => publicationStatus(num(row.newest_price_at), asOf);

const safetyMethodology = (asOf: number) => methodology(SAFETY_SCORE_VERSION, SAFETY_LABEL, asOf);
const edgesOf = (rows: Record<string, unknown>[]): Edge[] =>
  rows.map((r) => ({
    from: String(r.from_id),
    to: String(r.to_id),
    weight: requiredNum(r.weight, "dependency_edges.weight"),
    type: r.type as Edge["type"],
  }));

/** `site-data/report-cards.json` — legacy five-dimension report cards (spec 2.11). */
export const reportCardsArtifact = sqlArtifact(import.meta.url, {
  key: "report-cards",
  schemaVersion: "1.0.0",
  maxAgeSec: 1800,
  description: "Legacy five-dimension report cards with raw inputs and the dependency graph.",
  path: "site-data/report-cards.json",
  schema: ReportCardsPayloadSchema,
  sql: "report_cards",
  shape: "one",
  // the legacy card of each coin as the analytic wrote it, and the methodology constants
  transform: (row: ReportCardsRow, ctx) => ({
    cards: cardsOf(row.cards).map((c) => ({
      id: c.id,
      name: c.name,
      symbol: c.symbol,
      overallGrade: c.legacy.overallGrade,
      overallScore: c.legacy.overallScore,
      baseScore: c.legacy.baseScore,
      dimensions: c.legacy.dimensions,
      ratedDimensions: c.legacy.ratedDimensions,
      dependencies: c.raw.dependencies.map((d) => ({ id: d.id, weight: d.weight })),
      missingInputs: c.legacy.missingInputs,
      rawInputs: c.raw,
      isDefunct: c.raw.isDefunct,
    })),
    dependencyGraph: { edges: edgesOf(row.edges) },
    methodology: {
      version: REPORT_CARD_VERSION,
      weights: { ...LEGACY_WEIGHTS },
      pegMultiplierExponent: PEG_MULTIPLIER_EXPONENT,
      noLiquidityPenalty: NO_LIQUIDITY_PENALTY,
      activeDepegCaps: ACTIVE_DEPEG_CAPS,
      limitedEvidenceCeiling: LIMITED_EVIDENCE_CEILING,
      thresholds: GRADE_THRESHOLDS,
      changelogPath: "/methodology/report-card.md",
    },
    updatedAt: ctx.asOf,
  }),
  rows: (p: z.infer<typeof ReportCardsPayloadSchema>) => p.cards.length,
  dataAsOf,
});

/** `site-data/report-cards-v9.json` — safety score cards (current model) with pillars and publication status. */
export const reportCardsV9Artifact = sqlArtifact(import.meta.url, {
  key: "report-cards-v9",
  schemaVersion: "1.0.0",
  maxAgeSec: 1800,
  description: "Safety score cards: pillars, caps, missing inputs, raw inputs, publication status.",
  path: "site-data/report-cards-v9.json",
  schema: ReportCardsV9PayloadSchema,
  sql: "report_cards",
  shape: "one",
  // the safety score of each coin as the analytic wrote it, the methodology constants and the publication status
  transform: (row: ReportCardsRow, ctx) => ({
    cards: cardsOf(row.cards).map((c) => ({
      id: c.id,
      name: c.name,
      symbol: c.symbol,
      grade: c.safety.grade,
      score: c.safety.score,
      baseScore: c.safety.baseScore,
      pegMultiplier: c.safety.pegMultiplier,
      pillars: c.safety.pillars,
      caps: c.safety.caps,
      missingInputs: c.safety.missingInputs,
      coverageClass: c.coverage,
      rawInputs: c.raw,
      isDefunct: c.raw.isDefunct,
      methodologyVersion: SAFETY_SCORE_VERSION,
    })),
    methodology: {
      ...safetyMethodology(ctx.asOf),
      pillarWeights: { ...PILLAR_WEIGHTS },
      pegMultiplierExponent: PEG_MULTIPLIER_EXPONENT,
      limitedEvidenceCeiling: LIMITED_EVIDENCE_CEILING,
      unratedUpstreamScore: UNRATED_UPSTREAM_SCORE,
      thresholds: GRADE_THRESHOLDS,
    },
    publication: publicationOf(row, ctx.asOf),
    updatedAt: ctx.asOf,
  }),
  rows: (p: z.infer<typeof ReportCardsV9PayloadSchema>) => p.cards.length,
  dataAsOf,
});

/** `site-data/safety-grades.json` — one safety score and grade per listed coin. */
export const safetyGradesArtifact = sqlArtifact(import.meta.url, {
  key: "safety-grades",
  schemaVersion: "1.0.0",
  maxAgeSec: 1800,
  description: "One safety score and grade per listed coin, with methodology version and publication status.",
  path: "site-data/safety-grades.json",
  schema: SafetyGradesPayloadSchema,
  sql: "report_cards",
  shape: "one",
  // grade rows from the safety scores the analytic wrote, each with the publication status
  transform: (row: ReportCardsRow, ctx) => {
    const publication = publicationOf(row, ctx.asOf);
    const grades = cardsOf(row.cards).map((c) => ({
      id: c.id,
      symbol: c.symbol,
      name: c.name,
      grade: c.safety.grade,
      score: c.safety.score,
      coverageClass: c.coverage,
      missingInputs: c.safety.missingInputs,
      methodologyVersion: SAFETY_SCORE_VERSION,
      publicationStatus: publication.status,
    }));
    return { grades, methodology: safetyMethodology(ctx.asOf), publication, updatedAt: ctx.asOf };
  },
  rows: (p: z.infer<typeof SafetyGradesPayloadSchema>) => p.grades.length,
  dataAsOf,
});

/** `site-data/safety-score-history/<id>.json` — grade and score changes per coin, oldest first (first row: seed). */
export const safetyScoreHistoryArtifact = sqlArtifact(import.meta.url, {
  key: "safety-score-history",
  schemaVersion: "1.0.0",
  maxAgeSec: 86400,
  description: "Safety score history per coin: a row per change of grade or score, with the publication it came from.",
  path: "site-data/safety-score-history/{id}.json",
  idColumn: "stablecoin_id",
  schema: SafetyHistorySchema,
  sql: "safety_score_history",
  shape: "many",
  dataAsOf,
});

/** `site-data/dependency-graph.json` — coins with curated dependencies and their edges (upstream → dependent). */
export const dependencyGraphArtifact = sqlArtifact(import.meta.url, {
  key: "dependency-graph",
  schemaVersion: "1.0.0",
  maxAgeSec: 1800,
  description:
    "Dependency graph of the registry: collateral, custody, bridge, wrapper and mechanism edges with current grades.",
  path: "site-data/dependency-graph.json",
  schema: DependencyGraphPayloadSchema,
  sql: "report_cards",
  shape: "one",
  // the coins on an edge, with their current safety grade
  transform: (row: ReportCardsRow, ctx) => {
    const edges = edgesOf(row.edges);
    const inGraph = new Set(edges.flatMap((e) => [e.from, e.to]));
    const nodes = cardsOf(row.cards)
      .filter((c) => inGraph.has(c.id))
      .map((c) => ({ id: c.id, symbol: c.symbol, grade: c.safety.grade, score: c.safety.score }));
    return { nodes, edges, methodology: safetyMethodology(ctx.asOf), updatedAt: ctx.asOf };
  },
  rows: (p: z.infer<typeof DependencyGraphPayloadSchema>) => p.edges.length,
  dataAsOf,
});

/** `site-data/dependency-scenarios.json` — the modelled failure of each upstream coin, propagated to its dependents. */
/** The safety-score analytic, loaded at build time only (the scenarios' transform; the API server never loads it). */
const safetyScoring = buildTimeModule(
  "the safety-score analytic",
  () => import("../pipelines/analytics/safety-score.ts"),
);

/** What failureScenarios uses of the safety-score analytic (pipelines/analytics/safety-score.ts). */
export type SafetyScoring = Pick<
  typeof import("../pipelines/analytics/safety-score.ts"),
  "dependencyOrder" | "gradeOf" | "safetyScore"
>;

export const dependencyScenariosArtifact = sqlArtifact(import.meta.url, {
  key: "dependency-scenarios",
  schemaVersion: "1.0.0",
  maxAgeSec: 1800,
  description:
    "Modelled dependency scenarios: an upstream coin fails (score 0, grade F) and its dependents are regraded.",
  path: "site-data/dependency-scenarios.json",
  schema: DependencyScenariosPayloadSchema,
  sql: "report_cards",
  shape: "one",
  // the dependents regraded with the safety score analytic (failureScenarios)
  prepare: safetyScoring.load,
  transform: (row: ReportCardsRow, ctx) => ({
    scenarios: failureScenarios(cardsOf(row.cards), edgesOf(row.edges)),
    methodology: safetyMethodology(ctx.asOf),
    updatedAt: ctx.asOf,
  }),
  rows: (p: z.infer<typeof DependencyScenariosPayloadSchema>) => p.scenarios.length,
  dataAsOf,
});

/**
 * One scenario per upstream coin with dependents: its safety score is set to 0 (grade F) and every coin
 * reachable through dependency edges is regraded in dependency order with `safetyScore` over its
 * published rawInputs, upstream scores replaced by the stressed ones. Impacts list every reachable coin
 * (depth = edges from the failed coin), changed or not.
 */
export function failureScenarios(cards: CardRow[], edges: Edge[], scoring: SafetyScoring = safetyScoring.get()) {
  const { dependencyOrder, gradeOf, safetyScore } = scoring;
  const byId = new Map(cards.map((c) => [c.id, c]));
  const cardOf = (id: string) => must(byId.get(id), `card ${id}`);
  const dependents = new Map<string, string[]>();
  for (const e of edges) dependents.set(e.from, [...(dependents.get(e.from) ?? []), e.to]);
  const order = dependencyOrder(
    cards.map((c) => ({ id: c.id, deps: c.raw.dependencies.map((d) => d.id).filter((id) => byId.has(id)) })),
  );
  return [...dependents.keys()]
    .filter((id) => byId.has(id))
    .sort()
    .map((upId) => {
      const up = cardOf(upId);
      // Breadth-first from the failed coin: every queued id has its depth already.
      const depth = new Map<string, number>([[upId, 0]]);
      const queue = [upId];
      for (let cur = queue.shift(); cur !== undefined; cur = queue.shift()) {
        const next = must(depth.get(cur), `depth of ${cur}`) + 1;
        for (const d of dependents.get(cur) ?? [])
          if (!depth.has(d) && byId.has(d)) {
            depth.set(d, next);
            queue.push(d);
          }
      }
      const stressed = new Map<string, number | null>([[upId, 0]]);
      const impacts = [];
      for (const id of order) {
        const idDepth = depth.get(id);
        if (id === upId || idDepth === undefined) continue;
        const c = cardOf(id);
        const raw: RawInputs = {
          ...c.raw,
          dependencies: c.raw.dependencies.map((d) => {
            const score = stressed.get(d.id);
            return score !== undefined ? { ...d, upstreamSafetyScore: score } : d;
          }),
        };
        const after = safetyScore(raw);
        stressed.set(id, after.score);
        impacts.push({
          id,
          symbol: c.symbol,
          depth: idDepth,
          before: { score: c.safety.score, grade: c.safety.grade },
          after: { score: after.score, grade: after.grade },
        });
      }
      return {
        id: `${upId}-failure`,
        upstream: { id: upId, symbol: up.symbol, score: up.safety.score, grade: up.safety.grade },
        shock: { score: 0, grade: gradeOf(0) },
        assumptions: [
          `${up.symbol} fails: its safety score becomes 0 (grade F).`,
          "Dependents keep their own facts, peg and exit inputs; only the upstream scores in their dependency terms change.",
          "Collateral, custody and bridge exposure count at their curated weights; wrapper and mechanism dependencies cap the dependent at the upstream score (wrapper − 3).",
          "Effects propagate transitively in dependency order; no second-round market effects (depegs, redemptions) are modelled.",
        ],
        impacts,
      };
    });
}
