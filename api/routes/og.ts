import { z } from "zod";
import { outputPath } from "../../site-data/contract.ts";
import { OG_FEATURE, OG_IMAGES, OG_MEDIA_TYPE, type OgImageName, ogPath } from "../../site-data/og-images.ts";
import { stablecoinDetailArtifact } from "../../site-data/stablecoin-detail.ts";
import { CACHE_PROFILES } from "../lib/freshness.ts";
import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import type { HandlerContext, StaticResult, StaticRoute } from "./route.ts";
import { declareTag } from "./tags.ts";

/**
 * The image of the serving build at `path` as `image/png` with the `og-image` cache profile (spec 8).
 * 503 `Data not yet available: og-images` (`Retry-After: 60`) when there is no build or the build did
 * not publish this image.
 */
async function image(ctx: HandlerContext, path: string): Promise<StaticResult> {
  const bytes = ctx.build?.files.has(path) ? await ctx.build.file(path) : null;
  if (!bytes) throw notYetAvailable(OG_FEATURE);
  return { bytes, contentType: OG_MEDIA_TYPE, cacheControl: CACHE_PROFILES["og-image"] };
}

function og(
  operationId: string,
  name: OgImageName,
  summary: string,
  description: string,
  handler: (ctx: HandlerContext) => Promise<StaticResult>,
): StaticRoute {
  return {
    kind: "static",
    operationId,
    method: "GET",
    path: OG_IMAGES[name].route,
    lane: "public",
    tag: declareTag("og", "Share images (`image/png`, 1200×630) rendered at build time; no key, GET and HEAD."),
    mediaType: OG_MEDIA_TYPE,
    cache: "og-image",
    feature: OG_FEATURE,
    summary,
    description: `${description} 1200×630 PNG rendered when the build is made, from the same payloads the JSON routes serve; GET and HEAD, no key. 503 \`Data not yet available: og-images\` when the serving build has no such image.`,
    handler,
  };
}

/** Share images (spec 4.1 `/api/og/*`, exempt): PNG files of the serving build (build/og renders them). */
export const OG_ROUTES: StaticRoute[] = [
  {
    ...og(
      "getOgStablecoin",
      "stablecoin",
      "Share image of one stablecoin (image/png)",
      "Name and symbol, circulating supply (USD, 7-day change), price (USD), peg deviation (bps, peg score), safety grade. Published for the largest coins by circulating supply; 404 for an unknown coin id.",
      async (ctx) => {
        const id = ctx.params.stablecoinId;
        if (!ctx.build?.files.has(outputPath(stablecoinDetailArtifact.outputs.main, id)))
          throw new HttpError(404, `Unknown stablecoin id: ${id}`);
        return image(ctx, ogPath("stablecoin", id));
      },
    ),
    params: z.object({ stablecoinId: z.string().max(200, "must be at most 200 characters") }),
  },
  og(
    "getOgSafetyScores",
    "safety-scores",
    "Share image of the safety scores (image/png)",
    "Coins graded, coins per letter grade, grades of the five largest coins.",
    (ctx) => image(ctx, ogPath("safety-scores")),
  ),
  og(
    "getOgDepeg",
    "depeg",
    "Share image of depeg monitoring (image/png)",
    "Open depeg incidents, incidents opened in the last 30 days, pending ones, the four newest incidents.",
    (ctx) => image(ctx, ogPath("depeg")),
  ),
  og(
    "getOgStabilityIndex",
    "stability-index",
    "Share image of the stability index (image/png)",
    "Current score and band, 24 h average, coins in open depeg, market cap covered, the last year of daily scores.",
    (ctx) => image(ctx, ogPath("stability-index")),
  ),
];
