import { SITE_DATA_ARTIFACTS } from "../../site-data/artifacts.ts";
import type { SqlArtifact } from "../../site-data/contract.ts";
import { bind, type JsonRoute } from "./route.ts";
import { declareTag } from "./tags.ts";

/**
 * Routes declared with their artifact (`sqlArtifact(..., { route })` in site-data/): each serves the
 * artifact's `main` file as published on the API-key lane, 503 `Data not yet available: <key>` while the
 * serving build lacks it. Adding such a route is part of declaring the artifact. Its OpenAPI tag is the
 * route's `tag` (declared by a resource file), else a tag named by the artifact key and described by the
 * artifact's description.
 */
export const ARTIFACT_ROUTES: JsonRoute[] = SITE_DATA_ARTIFACTS.flatMap((a) => {
  const r = (a as SqlArtifact).route;
  if (!r) return [];
  return [
    {
      kind: "json",
      operationId: r.operationId,
      method: "GET",
      path: r.path,
      lane: "apiKey",
      tag: r.tag ?? declareTag(a.key, a.description),
      cache: r.cache,
      meta: r.meta,
      artifact: bind(a),
      summary: r.summary,
      description: r.description,
    } satisfies JsonRoute,
  ];
});
