import type { AuthRequest, Lane, LaneAuth } from "../lib/auth.ts";
import { SITE_PROXY_HEADER } from "../lib/auth.ts";
import type { RouteDecl } from "../routes/route.ts";

/**
 * The lane a request to `route` is judged on: the route's declared lane, except that a keyed GET
 * carrying `X-Ballast-Site-Proxy-Secret` is judged on the website-internal lane (spec 5.7: the site
 * secret instead of a key, no key quota). One decision for the app and the Node fast path.
 */
export function routeLane(
  route: Pick<RouteDecl, "lane" | "method">,
  header: (name: string) => string | undefined,
): Lane {
  return laneFor(route, header(SITE_PROXY_HEADER));
}

/** routeLane given the request's `X-Ballast-Site-Proxy-Secret` value (undefined when absent). */
export function laneFor(route: Pick<RouteDecl, "lane" | "method">, siteSecret: string | undefined): Lane {
  return route.lane === "apiKey" && route.method === "GET" && siteSecret !== undefined ? "site" : route.lane;
}

/**
 * Admits a request to `route` (routeLane, then LaneAuth.admit) or throws the HttpError of the lane:
 * 401, 404, 429 or 503 (see LaneAuth.admit).
 */
export function admitRoute(auth: LaneAuth, route: Pick<RouteDecl, "lane" | "method">, req: AuthRequest): Promise<void> {
  return auth.admit(routeLane(route, req.header), req);
}
