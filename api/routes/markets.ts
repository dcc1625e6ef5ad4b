import { z } from "zod";
import { outputPath } from "../../site-data/contract.ts";
import {
  type DexLiquidityHistoryRowSchema,
  dexLiquidityArtifact,
  dexLiquidityHistoryArtifact,
} from "../../site-data/dex-liquidity.ts";
import { stablecoinDetailArtifact } from "../../site-data/stablecoin-detail.ts";
import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import { intParam, stablecoinParam } from "../lib/query-params.ts";
import { artifactOf, bind, need, perCoinRows, type RouteDecl, stablecoinQuery } from "./route.ts";
import { declareTag } from "./tags.ts";

const tag = declareTag("markets", "DEX liquidity scores and history.");
type HistoryRow = z.infer<typeof DexLiquidityHistoryRowSchema>;

/** Default and range of `/api/dex-liquidity-history?days=` (window ending at the build's as-of). */
export const DEX_HISTORY_DAYS = { min: 1, max: 365, default: 90 } as const;

const HistoryQuery = z.object({
  stablecoin: stablecoinParam(),
  days: intParam(DEX_HISTORY_DAYS.min, DEX_HISTORY_DAYS.max)
    .default(DEX_HISTORY_DAYS.default)
    .describe(
      `Window in days ending at the build's as-of (${DEX_HISTORY_DAYS.min}-${DEX_HISTORY_DAYS.max}, default ${DEX_HISTORY_DAYS.default})`,
    ),
});

/**
 * Markets routes: DEX liquidity (spec 4.1 `/api/dex-liquidity`, `/api/dex-liquidity-history`, cache key
 * `dex-liquidity`). Bound to an optional artifact: until a build holds a DefiLlama yields `/pools`
 * capture observed at or before its as-of, nothing is published and both answer 503 `Data not yet
 * available: dex-liquidity` (the history route, cache key `dex-liquidity-history`, answers `Data not yet available: dex-liquidity-history` after checking the id: unknown → 404).
 */
export const MARKETS_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "getDexLiquidity",
    method: "GET",
    path: "/api/dex-liquidity",
    lane: "apiKey",
    tag,
    cache: "custom",
    meta: true,
    artifact: bind(dexLiquidityArtifact),
    summary: "DEX liquidity scores, top pools, chain/protocol breakdowns, quality metadata",
    description: [
      "`{ coins, unmatched, quality, methodology, updatedAt, _meta }` from the newest DefiLlama yields `/pools` capture at or before the build's as-of (`ballast-dex-liquidity-v1`).",
      "`coins`: one row per registry coin alive at as-of: `liquidityScore` (0-100, null when not rated) with `components` (depth, activity, concentration, spread, poolCount), `totalTvlUsd`, `poolCount`, `protocolCount`, `chainCount`, `hhi` (0-1), `totalVolume24hUsd`/`totalVolume7dUsd` (USD, null when any retained pool lacks a volume: never 0 for unknown), `volumeCoverageShare`, `activityStatus`, `liquidityScoreUnavailableReason` (null when rated; `no-retained-pools` when no matched pool holds ≥ $10,000), nullable `warning` (e.g. `activity-missing`: rated from depth and structure only), `topPools`, `chains`, `protocols`.",
      "Pools match coins by underlying token address (registry contracts) when the source gives addresses, else by symbol within the pool's chain; a token that is ambiguous, unknown or not on that chain is listed in `unmatched` with its `reason` and `candidates`, never guessed.",
      "503 `Data not yet available: dex-liquidity` (`Retry-After: 60`) while no build holds a pool capture.",
    ].join(" "),
  },
  {
    kind: "json",
    operationId: "getDexLiquidityHistory",
    method: "GET",
    path: "/api/dex-liquidity-history",
    lane: "apiKey",
    tag,
    cache: "slow",
    meta: false,
    artifact: bind(dexLiquidityHistoryArtifact),
    query: HistoryQuery,
    id: stablecoinQuery,
    summary: "DEX liquidity score history of one stablecoin",
    description: `Rows ascending by UTC day (Unix s, 00:00) of each pool capture day: \`{date, liquidityScore, totalTvlUsd, poolCount, hhi, totalVolume24hUsd, activityStatus, liquidityScoreUnavailableReason, observedAt, methodologyVersion}\`. \`days\` (${DEX_HISTORY_DAYS.min}-${DEX_HISTORY_DAYS.max}, default ${DEX_HISTORY_DAYS.default}) keeps the rows whose day starts at or after as-of minus that many days. Unknown id: 404; a known coin outside the scored universe (dead at as-of): \`[]\`; no pool capture in the build: 503 \`Data not yet available: dex-liquidity-history\`.`,
    async handler(ctx, route) {
      const build = need(ctx.build);
      const id = stablecoinQuery(ctx);
      const known =
        build.files.has(outputPath(stablecoinDetailArtifact.outputs.main, id)) ||
        build.files.has(outputPath(artifactOf(route).output, id));
      if (!known) throw new HttpError(404, `Unknown stablecoin id: ${id}`);
      if (!build.files.has(dexLiquidityArtifact.outputs.main.path))
        throw notYetAvailable(dexLiquidityHistoryArtifact.key);
      const found = await perCoinRows<HistoryRow[]>(route, ctx);
      if (!found) return { payload: [], dataAsOf: build.dataAsOf(dexLiquidityArtifact.outputs.main.path) };
      const start = build.manifest.asOf - (ctx.query as z.output<typeof HistoryQuery>).days * 86400;
      return { payload: found.value.filter((r) => r.date >= start), dataAsOf: build.dataAsOf(found.path) };
    },
  },
];
