import { z } from "zod";
import { stablecoinChartsArtifact } from "../../site-data/stablecoin-charts.ts";
import { stablecoinDetailArtifact } from "../../site-data/stablecoin-detail.ts";
import {
  StablecoinSummarySchema,
  stablecoinSummaryArtifact,
  type StablecoinSummariesSchema,
} from "../../site-data/stablecoin-summary.ts";
import { stablecoinsArtifact } from "../../site-data/stablecoins.ts";
import { supplyHistoryArtifact } from "../../site-data/supply-history.ts";
import { HttpError } from "../lib/http-error.ts";
import { intParam, stablecoinParam } from "../lib/query-params.ts";
import { artifactPayload, bind, need, perCoinRows, type RouteDecl, stablecoinQuery } from "./route.ts";
import { declareTag } from "./tags.ts";

const StablecoinIdParam = z.object({
  stablecoinId: z
    .string()
    .max(200, "must be at most 200 characters")
    .describe("Canonical stablecoin id `<ticker>-<issuer>`"),
});
const tag = declareTag("stablecoins", "Supply: the list, per-coin history and summary, aggregate charts.");
/** Query of `/api/supply-history`: the coin and an optional window (days). */
const SupplyHistoryQuery = z.object({
  stablecoin: stablecoinParam(),
  days: intParam(1, 3650).optional().describe("Last N days before the newest point (default: all)"),
});

/** Supply routes: the list, one coin's history and summary, aggregate charts, supply history. */
/**
 * Freshness ratios of the per-coin detail (spec 4.1), on its artifact budget of 600 s: fresh up to 300 s
 * (5 minutes; past it `Warning: 110`, `X-Data-Age`, `no-store`), degraded up to 86,400 s (24 hours), stale beyond.
 */
export const DETAIL_STALE_RATIOS = {
  fresh: 300 / stablecoinDetailArtifact.maxAgeSec,
  degraded: 86400 / stablecoinDetailArtifact.maxAgeSec,
} as const;

export const STABLECOIN_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "listStablecoins",
    method: "GET",
    path: "/api/stablecoins",
    lane: "apiKey",
    tag,
    cache: "producer-backed",
    meta: true,
    artifact: bind(stablecoinsArtifact),
    summary: "All listed stablecoins",
    description:
      "StablecoinData rows (spec 2.2), largest USD supply first. `circulating*` are USD keyed by pegType; `chainCirculating` is keyed by DefiLlama chain display label. Captures observed before 2025-12-01 carry native peg units upstream and are converted with the coin's price, else the ECB reference rate (`fxFallbackRates`), else par for USD pegs.",
  },
  {
    kind: "json",
    operationId: "getStablecoin",
    method: "GET",
    path: "/api/stablecoin/:stablecoinId",
    lane: "apiKey",
    tag,
    cache: "per-coin",
    meta: false,
    artifact: bind(stablecoinDetailArtifact),
    ratios: DETAIL_STALE_RATIOS,
    params: StablecoinIdParam,
    summary: "Daily supply history of one stablecoin",
    description:
      "TokenPoint history (spec 2.3). USD-pegged coins report USD at face value; non-USD pegs keep native units native and convert USD with the current price. Freshness (spec 4.1): a row whose data is over 5 minutes old is served with `Warning: 110`, `X-Data-Age` and `Cache-Control: no-store`; over 24 hours also `X-Data-Freshness: stale` (no synchronous refresh: rows come from the published build).",
  },
  {
    kind: "json",
    operationId: "getStablecoinSummary",
    method: "GET",
    path: "/api/stablecoin-summary/:stablecoinId",
    lane: "apiKey",
    tag,
    cache: "producer-backed",
    meta: false,
    artifact: bind(stablecoinSummaryArtifact),
    params: StablecoinIdParam,
    response: StablecoinSummarySchema,
    summary: "Supply summary of one stablecoin",
    description:
      "Summary (spec 2.4). `supplyUsd.change1d/7d/30d` are USD differences (current − previous), null unless both values were observed. 503 when the shared summary cache is missing or corrupt, 404 when the coin is absent from it.",
    async handler(ctx, route) {
      const { value: all, path } = await artifactPayload<z.output<typeof StablecoinSummariesSchema>>(route, ctx);
      const id = ctx.params.stablecoinId;
      const summary = Object.hasOwn(all, id) ? all[id] : undefined;
      if (!summary) throw new HttpError(404, `Unknown stablecoin id: ${id}`);
      return {
        json: await need(ctx.build).memo(`summary:${id}`, () => JSON.stringify(summary)),
        dataAsOf: need(ctx.build).dataAsOf(path),
      };
    },
  },
  {
    kind: "json",
    operationId: "getStablecoinCharts",
    method: "GET",
    path: "/api/stablecoin-charts",
    lane: "apiKey",
    tag,
    cache: "standard",
    meta: false,
    artifact: bind(stablecoinChartsArtifact),
    summary: "Aggregate supply over time",
    description:
      "Top-level array (spec 2.3). `aggregateUniverse` `defillama-all` points (2020-12 → 2023-07) carry only the all-peg `total`; `ballast-listed` points carry one key per pegType plus `total`.",
  },
  {
    kind: "json",
    operationId: "getSupplyHistory",
    method: "GET",
    path: "/api/supply-history",
    lane: "apiKey",
    tag,
    cache: "slow",
    meta: false,
    artifact: bind(supplyHistoryArtifact),
    query: SupplyHistoryQuery,
    id: stablecoinQuery,
    summary: "Daily supply history of one stablecoin",
    description:
      "Array of `{date, circulatingUsd, circulatingNative, source}` oldest first; `days` keeps the last N days before the newest point (default: all). A listed coin without accepted history points answers `[]`; an unknown id is 404.",
    async handler(ctx, route) {
      const found = await perCoinRows<{ date: number }[]>(route, ctx);
      if (!found) return { payload: [], dataAsOf: null };
      const { value: points, path } = found;
      const last = points.at(-1)?.date ?? 0;
      const days = (ctx.query as z.output<typeof SupplyHistoryQuery>).days;
      return {
        payload: days ? points.filter((p) => p.date > last - days * 86400) : points,
        dataAsOf: need(ctx.build).dataAsOf(path),
      };
    },
  },
];
