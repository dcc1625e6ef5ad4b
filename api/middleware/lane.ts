import type { Context, MiddlewareHandler } from "hono";
import type { IncomingMessage } from "node:http";
import type { AuthRequest, Lane, LaneAuth } from "../lib/auth.ts";
import { SITE_PROXY_HEADER } from "../lib/auth.ts";
import { clientAddress, type ProxyTrust, TRUST_NONE } from "../lib/client-address.ts";
import type { FastPathHeaders } from "../lib/fast-headers.ts";
import type { PublicRouteDecl, RouteDecl } from "../routes/route.ts";

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

/**
 * Whether requests to `route` are cacheable GETs (AuthRequest.cacheableGet: spec 5.5's cache of
 * verified keys may answer them during a store outage, and the response cache keeps their answers):
 * a JSON GET not marked `cacheable: false` nor not-yet-available; every static file; never a write.
 */
export function cacheableGet(route: PublicRouteDecl): boolean {
  if (route.kind === "static") return true;
  if (route.kind === "write") return false;
  return route.method === "GET" && route.cacheable !== false && !route.notYetAvailable;
}

/**
 * What LaneAuth needs of a Hono request: headers, the client IP (the socket address, or a forwarded
 * one through the hops `trust` admits: `clientAddress`) and whether it is a cacheable GET.
 */
export function authRequest(c: Context, cacheable: boolean, trust: ProxyTrust = TRUST_NONE): AuthRequest {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  const header = (n: string) => c.req.header(n);
  return { header, ip: clientAddress(incoming?.socket?.remoteAddress, header, trust), cacheableGet: cacheable };
}

/**
 * The lane step of a route (first of lane → validate → responseCache → handler): admits the request
 * on its lane (admitRoute) and runs the rest of the chain, or throws the lane's HttpError (answered by
 * the app's error handler).
 */
export function lane(route: PublicRouteDecl, auth: LaneAuth, trust: ProxyTrust = TRUST_NONE): MiddlewareHandler {
  const cacheable = cacheableGet(route);
  return async (c, next) => {
    await admitRoute(auth, route, authRequest(c, cacheable, trust));
    await next();
  };
}

const single = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * The lane step for a cacheable GET answered on Node's response (the fast path): the same decision
 * as `lane`. Returns true when it was decided without I/O (a key verified here before, in-process
 * limits: LaneAuth.admitCachedKey); otherwise the promise of admitRoute (headers read from
 * `req.headers`, client IP from the socket through `trust`). `nowMs`: the app clock's reading for this
 * request (read by LaneAuth when absent). Throws (or rejects with) the lane's HttpError.
 */
export function admitNodeRequest(
  auth: LaneAuth,
  route: Pick<RouteDecl, "lane" | "method">,
  h: FastPathHeaders,
  req: IncomingMessage,
  trust: ProxyTrust,
  nowMs?: number,
): true | Promise<void> {
  if (laneFor(route, h.siteProxySecret) === "apiKey" && auth.admitCachedKey(h.apiKey, nowMs)) return true;
  const header = (n: string) => single(req.headers[n.toLowerCase()]);
  return admitRoute(auth, route, {
    header,
    ip: clientAddress(req.socket.remoteAddress, header, trust),
    cacheableGet: true,
  });
}
