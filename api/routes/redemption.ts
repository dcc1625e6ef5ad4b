import { z } from "zod";
import {
  type RedemptionBackstopsPayloadSchema,
  redemptionBackstopsArtifact,
} from "../../site-data/redemption-backstops.ts";
import { outputPath } from "../../site-data/contract.ts";
import { stablecoinDetailArtifact } from "../../site-data/stablecoin-detail.ts";
import {
  reservesResponse,
  type StablecoinReservesStored,
  StablecoinReservesResponseSchema,
  stablecoinReservesArtifact,
} from "../../site-data/stablecoin-reserves.ts";
import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import { artifactOf, artifactPayload, bind, need, type RouteDecl } from "./route.ts";
import { declareTag } from "./tags.ts";

const tag = declareTag("redemption", "Redemption backstops and reserve composition.");
const RETRY = { "Retry-After": "60" };

/** Redemption backstops (spec 2.12) and reserve compositions by mode. */
export const REDEMPTION_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "getRedemptionBackstops",
    method: "GET",
    path: "/api/redemption-backstops",
    lane: "apiKey",
    tag,
    cache: "standard",
    meta: false,
    artifact: bind(redemptionBackstopsArtifact),
    summary: "Redemption backstops",
    description:
      "Spec 2.12 (`ballast-redemption-backstop-v1`): per coin with curated redemption facts, the route score 0-100 (access 0.20, settlement 0.15, execution certainty 0.15, capacity 0.25, output asset quality 0.15, cost 0.10; `queue-redeem` capped at 70, `offchain-issuer` at 65), its capacity (coverage of supply and USD breakpoints × settlement, queue, minimum and eligibility multipliers), fee, confidence labels and the effective exit score (`dexLiquidityScore`: the build's DEX liquidity score when a pool capture rated the coin, else null and the effective exit is the redemption side). Every entry is `sourceMode: static` (curated facts). An open below-peg depeg ≥ 2500 bps impairs the route: score null, `modelConfidence: low`, `resolutionState: failed`, `impairedReason` set (spec 2.12 has no `impaired` state). 503 `Data not yet available` before any entry is published; 503 `Redemption backstop snapshot unavailable` when the published snapshot is unreadable.",
    async handler(ctx, route) {
      const build = need(ctx.build);
      const path = artifactOf(route).output.path;
      if (!build.files.has(path)) throw new HttpError(503, "Data not yet available", RETRY);
      let value: z.infer<typeof RedemptionBackstopsPayloadSchema>;
      try {
        ({ value } = await artifactPayload<z.infer<typeof RedemptionBackstopsPayloadSchema>>(route, ctx));
      } catch {
        throw new HttpError(503, "Redemption backstop snapshot unavailable", RETRY);
      }
      if (Object.keys(value.coins).length === 0) throw new HttpError(503, "Data not yet available", RETRY);
      return { file: path, dataAsOf: build.dataAsOf(path) };
    },
  },
  {
    kind: "json",
    operationId: "getStablecoinReserves",
    method: "GET",
    path: "/api/stablecoin-reserves/:stablecoinId",
    lane: "apiKey",
    tag,
    cache: "reserve-fallback",
    meta: false,
    artifact: bind(stablecoinReservesArtifact),
    response: StablecoinReservesResponseSchema,
    cacheable: false,
    params: z.object({
      stablecoinId: z
        .string()
        .max(200, "must be at most 200 characters")
        .describe("Canonical stablecoin id `<ticker>-<issuer>`"),
    }),
    summary: "Live or fallback reserve composition of one stablecoin",
    description:
      "`mode` `live`: a live adapter read the issuer's machine-readable reserve report within the adapter's budget (`maxAgeSec`), served `Cache-Control: public, s-maxage=3600, max-age=300` (`reserve-live`); `live-stale`: the newest live reading is older than its budget (`public, s-maxage=1800, max-age=120`); `fallback`: the registry's curated composition (the Pharos core extract's reserves: name, share in percent, risk tier; undated), `public, s-maxage=300, max-age=60`. Components carry `risk` (curated tiers; null for live readings) and `valueUsd` (live only). Unknown id: 404; a known coin without any reserve data: 503 `Data not yet available: stablecoin-reserves` (never invented).",
    async handler(ctx, route) {
      const id = ctx.params.stablecoinId;
      const build = need(ctx.build);
      const { value, path } = await artifactPayload<StablecoinReservesStored>(route, ctx);
      const entry = Object.hasOwn(value.coins, id) ? value.coins[id] : undefined;
      if (!entry) {
        if (build.files.has(outputPath(stablecoinDetailArtifact.outputs.main, id)))
          throw notYetAvailable("stablecoin-reserves");
        throw new HttpError(404, `Unknown stablecoin id: ${id}`);
      }
      const payload = reservesResponse(id, entry, ctx.now, value.updatedAt);
      const cacheProfile =
        payload.mode === "live"
          ? "reserve-live"
          : payload.mode === "live-stale"
            ? "reserve-live-stale"
            : "reserve-fallback";
      return { payload, dataAsOf: build.dataAsOf(path), cacheProfile };
    },
  },
];
