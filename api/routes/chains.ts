import { z } from "zod";
import { chainsArtifact } from "../../site-data/chains.ts";
import { CHAINS_RATIOS } from "../lib/freshness.ts";
import { nonUsdShareArtifact, type NonUsdSharePayloadSchema } from "../../site-data/non-usd-share.ts";
import { intParam } from "../lib/query-params.ts";
import { artifactPayload, bind, type RouteDecl, serveArtifact } from "./route.ts";

const tag = "chains";
const chainList = bind(chainsArtifact, "list");
const chainDetail = bind(chainsArtifact, "detail");

/** Chain aggregates and the non-USD share of listed supply. */
export const CHAIN_ROUTES: RouteDecl[] = [
  {
    kind: "json", operationId: "listChains", method: "GET", path: "/api/chains", lane: "apiKey", tag, cache: "producer-backed", ratios: CHAINS_RATIOS, meta: true,
    artifact: chainList, response: z.union([chainList.output.schema, chainDetail.output.schema]),
    query: z.object({ chain: z.string().regex(/^[a-z0-9-]{1,64}$/, "must be a registry chain id").optional().describe("Registry chain id, e.g. `ethereum`") }),
    summary: "Chain aggregates, or one chain's coins",
    description: "Without `chain`: one row per chain (USD supply now and 1/7/30 days ago, dominance share, coin HHI). With `chain` (registry chain id, e.g. `ethereum`): the chain row and its coins; an unknown chain is 404. Chain health scores need safety grades, which are not yet published: `healthScore` and `healthBand` are null until then. Freshness uses 1x/2x of the 1800 s budget (spec 3.2).",
    handler: (ctx, route) => ctx.query.chain
      ? serveArtifact({ ...route, artifact: chainDetail, id: (c) => c.query.chain, idLabel: "chain" }, ctx)
      : serveArtifact(route, ctx),
  },
  {
    kind: "json", operationId: "getNonUsdShare", method: "GET", path: "/api/non-usd-share", lane: "apiKey", tag, cache: "slow", meta: false,
    artifact: bind(nonUsdShareArtifact),
    query: z.object({ days: intParam(30, 5000).optional().describe("History window in days, 30-5000 (default 5000)") }),
    summary: "Share of non-USD peg groups",
    description: "`current` and `history` of commodity and non-USD fiat shares (percent, 4 dp) of listed supply on days where the whole listed universe was observed. `days` (30-5000, default 5000) bounds the history.",
    async handler(ctx, route) {
      const { value: p, path } = await artifactPayload<z.output<typeof NonUsdSharePayloadSchema>>(route, ctx);
      const days: number = ctx.query.days ?? 5000;
      const last = p.history.at(-1)?.date ?? 0;
      return { payload: { current: p.current, history: p.history.filter((h) => h.date > last - days * 86400) }, dataAsOf: ctx.build!.dataAsOf(path) };
    },
  },
];
