import { z } from "zod";
import { SafetyGradesPayloadSchema, safetyGradesArtifact } from "../../site-data/report-cards.ts";
import {
  hydrate,
  type YieldRow,
  YieldRankingsFileSchema,
  YieldHistoryPointSchema,
  yieldAdapterManifestArtifact,
  yieldHistoryArtifact,
  yieldRankingsArtifact,
} from "../../site-data/yields.ts";
import { HttpError } from "../lib/http-error.ts";
import { intParam, stablecoinParam } from "../lib/query-params.ts";
import { artifactPayload, bind, need, perCoinRows, type RouteDecl, stablecoinQuery } from "./route.ts";
import { declareTag } from "./tags.ts";

const tag = declareTag(
  "yields",
  "Yield rankings, history and the adapter manifest: 503 until a build holds a pool capture.",
);
type HistoryPoint = z.infer<typeof YieldHistoryPointSchema>;

/** A ranking row as served: the published row plus the read-time safety fields. */
const RankedRowSchema = YieldRankingsFileSchema.shape.rankings.element.extend({
  safetyScore: z.number().int(),
  safetyGrade: z.string(),
  yieldToRisk: z.number().nullable(),
  pharosYieldScore: z.number().int().min(0).max(100),
});
const SummaryRowSchema = RankedRowSchema.pick({
  id: true,
  stablecoinId: true,
  symbol: true,
  project: true,
  chain: true,
  apy: true,
  tvlUsd: true,
  safetyGrade: true,
  pharosYieldScore: true,
});
const RankingsResponseSchema = YieldRankingsFileSchema.extend({
  rankings: z.array(z.union([RankedRowSchema, SummaryRowSchema])),
});

/** Rows of `rankings` with read-time safety from `grades` (a coin without a card: safety 40, grade NR), best first. */
function rank(rankings: YieldRow[], grades: z.infer<typeof SafetyGradesPayloadSchema>["grades"]) {
  const cards = new Map(grades.map((g) => [g.id, g]));
  return rankings
    .map((r) => ({ ...r, ...hydrate(r, cards.get(r.stablecoinId)) }))
    .sort((a, b) => b.pharosYieldScore - a.pharosYieldScore || b.apy - a.apy || (a.id < b.id ? -1 : 1));
}

/** Yield routes: rankings (rehydrated at read time with the build's safety grades), per-coin history, adapter manifest. */
export const YIELD_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "getYieldRankings",
    method: "GET",
    path: "/api/yield-rankings",
    lane: "apiKey",
    tag,
    cache: "standard",
    meta: false,
    artifact: bind(yieldRankingsArtifact),
    response: RankingsResponseSchema,
    query: z.object({
      projection: z
        .enum(["full", "summary"], { error: "must be full or summary" })
        .optional()
        .describe("`full` (default) or `summary` (top 25 rows, key fields)"),
    }),
    summary: "Yield rankings of stablecoin pools",
    description:
      "Spec 2.14 (`ballast-yield-v1`): single-asset pools of the newest DefiLlama `/pools` capture matched to one registry coin, ranked by `pharosYieldScore` (0-100), then APY. Rows are rehydrated at read time with `safetyScore`, `safetyGrade`, `yieldToRisk` and `pharosYieldScore` from the same build's safety grades; a row whose coin has no card keeps safety 40 and grade `NR`. `riskFreeRate` and `benchmarks.USD` are a proxy (TVL-weighted APY of tokenised T-bill fund pools, `isProxy`); other currencies have no recorded benchmark (`isFallback`, `fallbackMode: unavailable`, rate null). APYs percent. 503 `Data not yet available: yield-rankings` until a build holds a pool capture, and when the file is malformed.",
    async handler(ctx, route) {
      const { value, path } = await artifactPayload<z.infer<typeof YieldRankingsFileSchema>>(route, ctx);
      const grades = await need(ctx.build).payload(safetyGradesArtifact.outputs.main.path, (x) =>
        SafetyGradesPayloadSchema.parse(x),
      );
      const ranked = rank(value.rankings, grades?.grades ?? []);
      const rankings =
        ctx.query.projection === "summary" ? ranked.slice(0, 25).map((r) => SummaryRowSchema.parse(r)) : ranked;
      return { payload: { ...value, rankings }, dataAsOf: need(ctx.build).dataAsOf(path) };
    },
  },
  {
    kind: "json",
    operationId: "getYieldHistory",
    method: "GET",
    path: "/api/yield-history",
    lane: "apiKey",
    tag,
    cache: "slow",
    meta: false,
    artifact: bind(yieldHistoryArtifact),
    id: stablecoinQuery,
    response: z.array(YieldHistoryPointSchema),
    query: z.object({
      stablecoin: stablecoinParam(),
      days: intParam(1, 365).default(90).describe("Window in days ending at the newest point (1-365, default 90)"),
      mode: z
        .enum(["best", "source"], { error: "must be best or source" })
        .optional()
        .describe("`best` (default): per day the pool with the most TVL; `source`: one pool (needs `sourceKey`)"),
      sourceKey: z
        .string()
        .max(300, "must be at most 300 characters")
        .optional()
        .describe("`defillama-yields:<poolId>` (forces `source` mode)"),
    }),
    summary: "Yield history of one stablecoin",
    description:
      "Daily APY (percent) and TVL of the coin's matched single-asset pools, one point per capture day, oldest first. `mode=best` (default) keeps per day the pool with the most TVL; `sourceKey` (or `mode=source` with it) keeps one pool. Unknown id, or a `sourceKey` that is not one of the coin's pools: 404; `mode=source` without `sourceKey`: 400; a listed coin without pools: `[]`; 503 until a build holds a pool capture.",
    async handler(ctx, route) {
      const q = ctx.query as { days: number; mode?: "best" | "source"; sourceKey?: string };
      if (q.mode === "source" && !q.sourceKey)
        throw new HttpError(400, "Invalid parameter sourceKey: required when mode is source");
      const found = await perCoinRows<HistoryPoint[]>(route, ctx);
      if (!found) return { payload: [], dataAsOf: null };
      const { value: points, path } = found;
      let rows: HistoryPoint[];
      if (q.sourceKey) {
        rows = points.filter((p) => p.sourceKey === q.sourceKey);
        if (!rows.length) throw new HttpError(404, `Unknown sourceKey for ${ctx.query.stablecoin}: ${q.sourceKey}`);
      } else {
        const best = new Map<number, HistoryPoint>();
        for (const p of points) {
          const kept = best.get(p.date);
          if (!kept || p.tvlUsd > kept.tvlUsd) best.set(p.date, p);
        }
        rows = [...best.values()].sort((a, b) => a.date - b.date);
      }
      const last = rows.at(-1)?.date ?? 0;
      return {
        payload: rows.filter((p) => p.date > last - q.days * 86400),
        dataAsOf: need(ctx.build).dataAsOf(path),
      };
    },
  },
  {
    kind: "json",
    operationId: "getYieldAdapterManifest",
    method: "GET",
    path: "/api/yield-adapter-manifest",
    lane: "apiKey",
    tag,
    cache: "standard",
    meta: false,
    artifact: bind(yieldAdapterManifestArtifact),
    summary: "Yield adapter manifest",
    description:
      "The yield sources the build reads (today DefiLlama yields `/pools`): endpoint, lineage family, number of captures, newest capture time, pools, single-asset pools matched to a coin, coins covered, and the routes each feeds.",
  },
];
