import { z } from "zod";
import { chainsArtifact } from "../../site-data/chains.ts";
import { CHAINS_RATIOS } from "../lib/freshness.ts";
import { nonUsdShareArtifact, type NonUsdSharePayloadSchema } from "../../site-data/non-usd-share.ts";
import { intParam } from "../lib/query-params.ts";
import { artifactPayload, bind, need, type RouteDecl, serveArtifact } from "./route.ts";
import { declareTag } from "./tags.ts";

const tag = declareTag("chains", "Chain aggregates and the non-USD share.");
const chainList = bind(chainsArtifact, "list");
const chainDetail = bind(chainsArtifact, "detail");
/** Query of `/api/non-usd-share`: history window (days). */
const NonUsdShareQuery = z.object({
  days: intParam(30, 5000).default(5000).describe("History window in days, 30-5000 (default 5000)"),
});

/** Chain aggregates and the non-USD share of listed supply. */
export const CHAIN_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "listChains",
    method: "GET",
    path: "/api/chains",
    lane: "apiKey",
    tag,
    cache: "producer-backed",
    ratios: CHAINS_RATIOS,
    meta: true,
    artifact: chainList,
    response: z.union([chainList.output.schema, chainDetail.output.schema]),
    query: z.object({
      chain: z
        .string()
        .regex(/^[a-z0-9-]{1,64}$/, "must be a registry chain id")
        .optional()
        .describe("Registry chain id, e.g. `ethereum`"),
    }),
    summary: "Chain aggregates, or one chain's coins",
    description: [
      "Without `chain`: one row per chain (USD supply now and 1/7/30 days ago, dominance share, coin HHI) with its chain health. With `chain` (registry chain id, e.g. `ethereum`): the chain row and its coins; an unknown chain is 404. Freshness uses 1x/2x of the 1800 s budget (spec 3.2).",
      "Chain health (`healthMethodologyVersion` `ballast-chain-health-v1`, changelog `/methodology/chain-health.md`): `healthScore` = round(0.30 quality + 0.20 chainEnvironment + 0.20 concentration + 0.20 pegStability + 0.10 backingDiversity), 0-100, null when quality is null; `healthBand` robust ≥ 80, healthy ≥ 60, mixed ≥ 40, fragile ≥ 20, concentrated < 20.",
      "`healthComponents` (0-100): quality = supply-weighted safety score over rated supply (null when under 50% of the chain's supply is rated); chainEnvironment = curated registry chain tier (ethereum 100, stage1-l2 66, mature-alt-l1 45, established-alt-l1 20, unproven 0; 50 when the chain has no curated tier); concentration = round(100 × (1 − HHI)); pegStability = supply-weighted max(0, 100 − |deviation bps|/5), 50 for a coin without a judged current price; backingDiversity = normalised entropy of fiat/RWA- vs crypto-backed supply × 100.",
      "`healthInputs`: ratedShare (0-1), chainTier (null when not curated), chainEnvironmentBasis (`curated-tier` or `unknown-tier`), unavailableReason (`rated-share-below-50pct`, `no-supply`, or null).",
    ].join(" "),
    handler: (ctx, route) => {
      const chain = ctx.query.chain;
      return typeof chain === "string" && chain
        ? serveArtifact({ ...route, artifact: chainDetail, id: () => chain, idLabel: "chain" }, ctx)
        : serveArtifact(route, ctx);
    },
  },
  {
    kind: "json",
    operationId: "getNonUsdShare",
    method: "GET",
    path: "/api/non-usd-share",
    lane: "apiKey",
    tag,
    cache: "slow",
    meta: false,
    artifact: bind(nonUsdShareArtifact),
    query: NonUsdShareQuery,
    summary: "Share of non-USD peg groups",
    description:
      "`current` and `history` of commodity and non-USD fiat shares (percent, 4 dp) of listed supply on days where the whole listed universe was observed. `days` (30-5000, default 5000) bounds the history.",
    async handler(ctx, route) {
      const { value: p, path } = await artifactPayload<z.output<typeof NonUsdSharePayloadSchema>>(route, ctx);
      const days = (ctx.query as z.output<typeof NonUsdShareQuery>).days;
      const last = p.history.at(-1)?.date ?? 0;
      return {
        payload: { current: p.current, history: p.history.filter((h) => h.date > last - days * 86400) },
        dataAsOf: need(ctx.build).dataAsOf(path),
      };
    },
  },
];
