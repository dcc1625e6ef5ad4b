import { bluechipRatingsArtifact } from "../../site-data/bluechip-ratings.ts";
import { bind, type RouteDecl } from "./route.ts";
import { declareTag } from "./tags.ts";

const tag = declareTag(
  "ratings",
  "Third-party safety ratings (Bluechip) joined to stablecoin ids: 503 until a build holds a rating capture.",
);

/**
 * Third-party safety ratings (spec 4.1 `/api/<rater>-ratings`, rater = bluechip, cache key
 * `bluechip-ratings`). Bound to an optional artifact: until a build holds a rating capture the file
 * is not published, so the route answers 503 `Data not yet available: bluechip-ratings` and health
 * lists it as not yet available.
 */
export const RATINGS_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "getBluechipRatings",
    method: "GET",
    path: "/api/bluechip-ratings",
    lane: "apiKey",
    tag,
    cache: "slow",
    meta: true,
    artifact: bind(bluechipRatingsArtifact),
    summary: "Third-party safety ratings (Bluechip)",
    description: [
      "Bluechip's letter grades (`A+` to `F`) joined to stablecoin ids: `{ ratings: [{stablecoinId, slug, name, symbol, grade, score, reportDate, lastChangeDate, url, observedAt}], unmatched: [{slug, name, symbol, grade, reason, candidates, url, observedAt}], updatedAt, _meta }`.",
      "`score` is Bluechip's numeric score (0-100) when it publishes one, else null; `reportDate`/`lastChangeDate` are the published rating and last grade-change days (`YYYY-MM-DD`, null when not published); `observedAt` and `updatedAt` are Unix seconds of the fetch (upstream `backend.bluechip.org/coin-data/{slug}`).",
      "A rating joins the registry coin with its symbol; when several coins share the symbol the rating's name must pick exactly one. Otherwise it is listed in `unmatched` with `reason` `unknown-symbol`, `ambiguous-symbol` (with the `candidates`) or `duplicate-stablecoin`, never guessed.",
      "503 `Data not yet available: bluechip-ratings` (`Retry-After: 60`) while no build holds a rating capture (`npx tsx build/cli.ts capture`, then build).",
    ].join(" "),
  },
];
