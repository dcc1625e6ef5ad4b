import { getRequestListener } from "@hono/node-server";
import { Hono } from "hono";
import type { IncomingMessage, ServerResponse } from "node:http";
import { LaneAuth } from "./lib/auth.ts";
import { Cors } from "./middleware/cors.ts";
import { installErrorHandlers } from "./middleware/errors.ts";
import { mountFallbacks } from "./middleware/fallbacks.ts";
import { type NodeAnswer, nodeFastPath, withFastPath } from "./middleware/fast-path.ts";
import { render } from "./middleware/json-route.ts";
import { lane } from "./middleware/lane.ts";
import { maintenanceMode } from "./middleware/maintenance.ts";
import { RouteResponses } from "./middleware/response-cache.ts";
import { serveStatic, serveWrite } from "./middleware/route-handlers.ts";
import { siteDataProxy } from "./middleware/site-proxy.ts";
import { validate } from "./middleware/validate.ts";
import { type ProxyTrust, TRUST_NONE } from "./lib/client-address.ts";
import type { ClockMode } from "./lib/clock.ts";
import type { KeyStore } from "./lib/key-store.ts";
import type { MaintenanceGate } from "./lib/maintenance.ts";
import type { PublishedStore } from "./lib/published.ts";
import type { KeyRateLimiter } from "./lib/rate-limit.ts";
import { ADMIN_PATH_FAMILIES } from "./routes/admin.ts";
import { buildOpenApi } from "./openapi.ts";
import { buildPostmanCollection, buildPostmanEnvironment } from "./postman.ts";
import { ROUTES } from "./routes/index.ts";
import type { ApiDescriptions, RouteServices } from "./routes/route.ts";

/** Dependencies of the app; the server wires real ones, tests wire their own. */
export interface AppDeps {
  store: PublishedStore;
  keys: KeyStore;
  limiter: KeyRateLimiter;
  /** Allowed browser origins; the first is echoed for requests without Origin (spec 1 rule 2). */
  corsOrigins: string[];
  /** `auto`: replay clock for builds made from recorded captures, wall clock otherwise. */
  clockMode: ClockMode;
  /** Wall clock in ms (injectable). */
  nowMs?: () => number;
  /** Secrets of the website-internal and webhook lanes; unset = lane not served (404). */
  siteProxySecret?: string;
  /** Website-internal secret being rotated out, accepted beside `siteProxySecret`. */
  siteProxySecretPrevious?: string;
  webhookSecret?: string;
  /** Facts about dependencies that health reports (state store status) and the status history store and recorder. */
  services?: RouteServices;
  /** Byte budget of the one response cache (default 16 MiB). */
  responseCacheBytes?: number;
  /** Maintenance switch: while on, every `/api/*` request but preflights answers 503 maintenance (health included). */
  maintenance?: MaintenanceGate;
  /** Proxies trusted to forward the client address (`TRUSTED_PROXIES`); default none: the socket peer is the client. */
  trustedProxies?: ProxyTrust;
}

export { serviceNow } from "./lib/clock.ts";

/** The descriptions of the route table the static routes serve, given to them as RouteServices.descriptions. */
const DESCRIPTIONS: ApiDescriptions = {
  openApi: buildOpenApi,
  postmanCollection: buildPostmanCollection,
  postmanEnvironment: buildPostmanEnvironment,
};

/**
 * Builds the Hono app from the route table (api/routes): CORS, admin families (404 before key auth),
 * per route lane → validate → responseCache → handler (unknown parameters are 400 on every route),
 * freshness headers, one byte-budgeted response cache, content coding by `Accept-Encoding`, and
 * 405 with `Allow` from the table.
 */
export function createApp(deps: AppDeps): Hono {
  return createService(deps).app;
}

/**
 * The Hono app plus the Node fast path sharing its lane checks and response cache
 * (middleware/fast-path.ts): the returned listener answers a keyed GET whose response is already
 * cached for this build and second on Node's response (lane check and per-key limit included), and
 * hands every other request to the app.
 */
export function createNodeListener(deps: AppDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { app, fastPath } = createService(deps);
  return withFastPath(fastPath, getRequestListener(app.fetch));
}

/**
 * The public listener's spine. Middlewares in order: errors and 404, CORS preflight, maintenance, the
 * same-origin proxy; then each route of the table as lane → validate → responseCache → handler
 * (write routes: lane → handler); then the fallbacks (405s, admin families, unknown paths). Operator
 * routes are served by the operator listener only (api/ops-app.ts); here their paths are 404.
 */
function createService(deps: AppDeps): { app: Hono; fastPath: NodeAnswer } {
  const nowMs = deps.nowMs ?? Date.now;
  const trust = deps.trustedProxies ?? TRUST_NONE;
  const auth = new LaneAuth({ ...deps, nowMs });
  const cors = new Cors(deps.corsOrigins);
  // The caller's object itself: api/server.ts sets its publicOrigin once the listener has a port.
  const services = deps.services ?? {};
  services.descriptions ??= DESCRIPTIONS;
  const inputs = { store: deps.store, clockMode: deps.clockMode, nowMs, services };
  const responses = new RouteResponses({ ...inputs, cors, maxBytes: deps.responseCacheBytes });
  const app = new Hono();
  installErrorHandlers(app, cors);
  app.options("*", cors.preflight());
  if (deps.maintenance) app.use("/api/*", maintenanceMode(deps.maintenance));
  app.all(
    "/_site-data/*",
    siteDataProxy({ origins: deps.corsOrigins, secret: deps.siteProxySecret, fetch: (req) => app.fetch(req) }),
  );
  for (const route of ROUTES) {
    if (route.kind === "admin") continue;
    const steps =
      route.kind === "json"
        ? [validate(route, inputs), responses.responseCache(route), render(route)]
        : route.kind === "static"
          ? [validate(route, inputs), serveStatic(route)]
          : [serveWrite(route, { ...inputs, cors, trust })];
    app.on(route.method, route.path, lane(route, auth, trust), ...steps);
  }
  mountFallbacks(app, { routes: ROUTES, adminFamilies: ADMIN_PATH_FAMILIES, auth, trust });
  const fastPath = nodeFastPath({ auth, responses, cors, maintenance: deps.maintenance, trust, nowMs });
  return { app, fastPath };
}
