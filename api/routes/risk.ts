import { z } from "zod";
import {
  dependencyGraphArtifact,
  dependencyScenariosArtifact,
  type ReportCardsV9PayloadSchema,
  reportCardsArtifact,
  reportCardsV9Artifact,
  safetyGradesArtifact,
  type SafetyHistoryRowSchema,
  SafetyHistorySchema,
  safetyScoreHistoryArtifact,
} from "../../site-data/report-cards.ts";
import { intParam, stablecoinParam } from "../lib/query-params.ts";
import {
  artifactPayload,
  bind,
  type HandlerContext,
  type JsonRoute,
  need,
  perCoinRows,
  type RouteDecl,
  type RouteResult,
  stablecoinQuery,
} from "./route.ts";
import { declareTag } from "./tags.ts";

const tag = declareTag(
  "risk",
  "Safety grades and report cards, stress signals (DEWS), the stability index, the dependency graph and scenarios.",
);
type HistoryRow = z.infer<typeof SafetyHistoryRowSchema>;

const HistoryQuery = z.object({
  stablecoin: stablecoinParam(),
  days: intParam(1, 3650).default(365).describe("Window in days ending at the build's as-of day (1-3650, default 365)"),
});

/**
 * History rows of `ctx.query.stablecoin` within the last `days` (default 365) ending at the newest row:
 * the row in force at the window's start (as the seed: prev null), then every change inside it.
 * 404 for an unknown id; a listed coin without rows gives `[]`.
 */
async function historyWindow(
  ctx: HandlerContext,
  route: JsonRoute,
): Promise<{ rows: HistoryRow[]; dataAsOf: number | null }> {
  const found = await perCoinRows<HistoryRow[]>(route, ctx);
  if (!found) return { rows: [], dataAsOf: null };
  const { value: all, path } = found;
  const build = need(ctx.build);
  const days = (ctx.query as z.output<typeof HistoryQuery>).days;
  const start = build.manifest.asOf - days * 86400;
  const inside = all.filter((r) => r.date > start);
  const seed = all.filter((r) => r.date <= start).at(-1);
  const rows = seed ? [{ ...seed, prevGrade: null, prevScore: null }, ...inside] : inside;
  return { rows, dataAsOf: build.dataAsOf(path) };
}

const HISTORY_DESCRIPTION =
  "Rows ascending by UTC day (Unix s, 00:00): a row whenever the grade or score changed, recomputed per day from what was known that day (incidents started by then, priced days, supply, deaths) with today's registry facts; the as-of row is the published grade. `days` (1-3650, default 365) keeps the window ending at the build's as-of; its first row is the grade in force at the window's start, with `prevGrade`/`prevScore` null (the seed). Unknown id: 404; a listed coin without rows: `[]`.";

/** Risk routes: safety grades and report cards, their history, the dependency graph and scenarios. */
export const RISK_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "getReportCardsV9",
    method: "GET",
    path: "/api/report-cards/v9",
    lane: "apiKey",
    tag,
    cache: "standard",
    meta: false,
    artifact: bind(reportCardsV9Artifact),
    summary: "Safety score report cards (current model)",
    description:
      "One card per listed coin (`ballast-safety-score-v2`): pillars Backing 40%, Exit 35%, Economic control 25% (grade, score, reason each), peg multiplier, caps applied, missing inputs (NR), coverage class and every raw input, so the grade can be recomputed. `publication.status` is `held` when the price inputs are older than 48 h at as-of; a held publication is served with `Cache-Control: no-store`.",
    async handler(ctx, route): Promise<RouteResult> {
      const { value, path } = await artifactPayload<z.infer<typeof ReportCardsV9PayloadSchema>>(route, ctx);
      return { file: path, dataAsOf: need(ctx.build).dataAsOf(path), noStore: value.publication.status === "held" };
    },
  },
  {
    kind: "json",
    operationId: "getReportCards",
    method: "GET",
    path: "/api/report-cards",
    lane: "apiKey",
    tag,
    cache: "standard",
    meta: false,
    artifact: bind(reportCardsArtifact),
    summary: "Legacy report cards",
    description:
      "Spec 2.11 (`ballast-report-card-v2`): five dimensions (pegStability as a multiplier, liquidity = effective exit, resilience, decentralization, dependencyRisk), weights, `pegMultiplierExponent`, grade thresholds A+..F, `NR` with `missingInputs`, `ratedDimensions`, dependencies (weights sum ≤ 1), `rawInputs`, `isDefunct`, and the dependency graph (edges upstream → dependent).",
  },
  {
    kind: "json",
    operationId: "getSafetyGrades",
    method: "GET",
    path: "/api/safety-grades",
    lane: "public",
    tag,
    cache: "standard",
    meta: false,
    artifact: bind(safetyGradesArtifact),
    summary: "One safety grade per listed stablecoin (exempt from key)",
    description:
      "Score 0-100 and grade (A+..F, NR with the missing inputs named; defunct coins F) per listed coin with methodology version and publication status. Exempt from `X-API-Key` (spec 5.2).",
  },
  {
    kind: "json",
    operationId: "getSafetyScoreHistory",
    method: "GET",
    path: "/api/safety-score-history",
    lane: "apiKey",
    tag,
    cache: "slow",
    meta: false,
    artifact: bind(safetyScoreHistoryArtifact),
    query: HistoryQuery,
    id: stablecoinQuery,
    response: z.array(SafetyHistorySchema.element.omit({ publication: true })),
    summary: "Safety score history of one stablecoin",
    description: `Spec 2.13. ${HISTORY_DESCRIPTION}`,
    async handler(ctx, route) {
      const { rows, dataAsOf } = await historyWindow(ctx, route);
      return { payload: rows.map(({ publication: _, ...r }) => r), dataAsOf };
    },
  },
  {
    kind: "json",
    operationId: "getSafetyScoreHistoryV2",
    method: "GET",
    path: "/api/safety-score-history-v2",
    lane: "apiKey",
    tag,
    cache: "slow",
    meta: false,
    artifact: bind(safetyScoreHistoryArtifact),
    query: HistoryQuery,
    id: stablecoinQuery,
    summary: "Identity-aware safety score history of one stablecoin",
    description: `${HISTORY_DESCRIPTION} Each row keeps the identity of the publication it came from: \`publication.kind\` \`backfill\` (recomputed by the build from recorded history) or \`published\` (the build's own as-of grade), its methodology version and the as-of of the build that computed it.`,
    async handler(ctx, route) {
      const { rows, dataAsOf } = await historyWindow(ctx, route);
      return { payload: rows, dataAsOf };
    },
  },
  {
    kind: "json",
    operationId: "getDependencyGraph",
    method: "GET",
    path: "/api/dependency-graph/v1",
    lane: "public",
    tag,
    cache: "standard",
    meta: false,
    artifact: bind(dependencyGraphArtifact),
    summary: "Dependency graph (exempt from key)",
    description:
      "Curated dependencies between coins (registry `risk.dependencies`): edges `{from (upstream), to (dependent), weight, type}` with type collateral, custody, bridge, wrapper or mechanism, and each node's current safety grade.",
  },
  {
    kind: "json",
    operationId: "getDependencyScenarios",
    method: "GET",
    path: "/api/dependency-scenarios/v1",
    lane: "public",
    tag,
    cache: "standard",
    meta: false,
    artifact: bind(dependencyScenariosArtifact),
    summary: "Modelled dependency scenarios (exempt from key)",
    description:
      "One scenario per upstream coin with dependents: it fails (score 0, grade F) and every coin reachable through dependency edges is regraded in dependency order from its published raw inputs. Each scenario states its assumptions and lists impacts (depth, before, after).",
  },
];
