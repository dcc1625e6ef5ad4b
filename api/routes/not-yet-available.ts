import { OG_IMAGES } from "../../site-data/og-images.ts";
import type { Lane } from "../lib/auth.ts";
import type { CacheProfile } from "../lib/freshness.ts";
import { OG_ROUTES } from "./og.ts";
import { MARKETS_ROUTES } from "./markets.ts";
import { RATINGS_ROUTES } from "./ratings.ts";
import { USDS_ROUTES } from "./usds.ts";
import { YIELD_ROUTES } from "./yields.ts";
import type { JsonRoute, RouteDecl } from "./route.ts";
import { declareTag } from "./tags.ts";

const tag = declareTag(
  "not-yet-available",
  "Routes of the contract whose data no build publishes yet: 503 `Data not yet available` until it is.",
);

/**
 * A spec route whose data no build publishes yet: declared now, so it authenticates and answers 503 `Data not yet available: <feature>` with `Retry-After: 60` (spec 7
 * rule 3); it never invents data. Health lists the same features as not yet available.
 */
export function later(
  operationId: string,
  path: string,
  feature: string,
  cache: CacheProfile,
  summary: string,
  lane: Lane = "apiKey",
): JsonRoute {
  return {
    kind: "json",
    operationId,
    method: "GET",
    path,
    lane,
    tag,
    cache,
    meta: false,
    notYetAvailable: feature,
    summary,
    description: `${summary}. Not yet published by any build: answers 503 \`Data not yet available: ${feature}\` with \`Retry-After: 60\` until it is.`,
  };
}

/** Spec 4.1 read routes whose features land with later issues (none today; `later` declares one). */
export const NOT_YET_AVAILABLE_ROUTES: RouteDecl[] = [];

/**
 * Route files whose routes are bound to optional artifacts (published only once their source has
 * rows, `Artifact.optional`). Listed here rather than read from `routes/index.ts`, which imports the
 * health route (an import cycle); a health test checks every optional binding of the table is here.
 */
export const OPTIONAL_ARTIFACT_ROUTES: RouteDecl[] = [
  ...RATINGS_ROUTES,
  ...MARKETS_ROUTES,
  ...USDS_ROUTES,
  ...YIELD_ROUTES,
];

/** Whether an output is published: its file, or for a `{id}` template any file under the template's prefix. */
function isPublished(path: string, published: ReadonlySet<string>): boolean {
  if (!path.includes("{id}")) return published.has(path);
  const prefix = path.slice(0, path.indexOf("{id}"));
  for (const p of published) if (p.startsWith(prefix)) return true;
  return false;
}

/**
 * Features no build publishes yet, from the route table: feature → the GET paths answering 503 for
 * it (OpenAPI form): every `notYetAvailable` route, plus routes bound to an optional artifact whose
 * file (any file of a `{id}` output) is not among `published` (the serving build's file paths), under the artifact's key,
 * plus share-image routes (`og-images`) whose image (any per-coin image) the build lacks. Health
 * reports them (no effect on status), so the list cannot drift from the routes.
 */
export function notYetAvailableFeatures(published: ReadonlySet<string> = new Set()): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  /** The paths listed for `feature` so far (the list is made on first use). */
  const routesOf = (feature: string): string[] => {
    out[feature] ??= [];
    return out[feature];
  };
  for (const r of [...NOT_YET_AVAILABLE_ROUTES, ...OPTIONAL_ARTIFACT_ROUTES]) {
    if (r.kind !== "json") continue;
    const feature =
      r.notYetAvailable ??
      (r.artifact?.optional && !isPublished(r.artifact.output.path, published) ? r.artifact.key : undefined);
    if (feature) routesOf(feature).push(r.path.replace(/:([A-Za-z]+)/g, "{$1}"));
  }
  for (const r of OG_ROUTES) {
    const image = Object.values(OG_IMAGES).find((i) => i.route === r.path);
    if (r.feature && image && !isPublished(image.path, published))
      routesOf(r.feature).push(r.path.replace(/:([A-Za-z]+)/g, "{$1}"));
  }
  return out;
}
