import { getRequestListener } from "@hono/node-server";
import { Hono, type Context } from "hono";
import type { IncomingMessage, ServerResponse } from "node:http";
import { LaneAuth, SITE_PROXY_HEADER } from "./lib/auth.ts";
import { admitRoute, laneFor } from "./middleware/lane.ts";
import { authRequest, bodyReader, refreshedHeaders, requestKey, respond, validate } from "./middleware/json-route.ts";
import { codingFor, notModifiedHeaders, sentHeaders } from "./middleware/response-writer.ts";
import { Cors } from "./middleware/cors.ts";
import { errorAnswer, installErrorHandlers } from "./middleware/errors.ts";
import { maintenanceMode } from "./middleware/maintenance.ts";
import { siteDataProxy } from "./middleware/site-proxy.ts";
import { type ContentCoding, compressBody, MIN_COMPRESS_BYTES, negotiate } from "./lib/encoding.ts";
import { clientAddress, type ProxyTrust, TRUST_NONE } from "./lib/client-address.ts";
import { type ClockMode, serviceNow } from "./lib/clock.ts";
import { fastPathHeaders } from "./lib/fast-headers.ts";
import { HttpError } from "./lib/http-error.ts";
import type { KeyStore } from "./lib/key-store.ts";
import type { MaintenanceGate } from "./lib/maintenance.ts";
import type { PublishedStore } from "./lib/published.ts";
import type { KeyRateLimiter } from "./lib/rate-limit.ts";
import { type CachedResponse, ResponseCache } from "./lib/response-cache.ts";
import { ADMIN_PATH_FAMILIES } from "./routes/admin.ts";
import { ROUTES } from "./routes/index.ts";
import type { JsonRoute, RouteServices, StaticRoute, WriteRoute } from "./routes/route.ts";

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

const STATIC_CACHE = "public, max-age=300";

export { serviceNow } from "./lib/clock.ts";

const single = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * Builds the Hono app from the route table (api/routes): CORS, admin families (404 before key auth),
 * one lane check per route, parameter validation (unknown parameters are 400 on every route),
 * freshness headers, one byte-budgeted response cache, content coding by `Accept-Encoding`, and
 * 405 with `Allow` from the table.
 */
export function createApp(deps: AppDeps): Hono {
  return createService(deps).app;
}

/**
 * The Hono app plus a Node fast path sharing its caches: the returned listener answers a keyed GET whose
 * response is already cached for this build and second straight on Node's response (lane check and
 * per-key limit included), and hands every other request to the app.
 */
export function createNodeListener(deps: AppDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { app, fastPath } = createService(deps);
  const slow = getRequestListener(app.fetch);
  return (req, res) => {
    let done: boolean | Promise<boolean>;
    try {
      done = fastPath(req, res);
    } catch {
      done = false;
    }
    if (done === true) return;
    if (done === false) {
      if (!res.headersSent) void slow(req, res);
      return;
    }
    done.then(
      (answered) => {
        if (!answered) void slow(req, res);
      },
      () => {
        if (!res.headersSent) void slow(req, res);
      },
    );
  };
}

function createService(deps: AppDeps): {
  app: Hono;
  fastPath: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
} {
  const nowMs = deps.nowMs ?? Date.now;
  const auth = new LaneAuth({
    keys: deps.keys,
    limiter: deps.limiter,
    nowMs,
    siteProxySecret: deps.siteProxySecret,
    siteProxySecretPrevious: deps.siteProxySecretPrevious,
    webhookSecret: deps.webhookSecret,
  });
  // Requests answered by the fast path are known by their exact URL (path and query as sent), kept
  // with their cached entry and charged to the same byte budget.
  const cache = new ResponseCache<JsonRoute>(deps.responseCacheBytes);
  // One render per cache key in flight: requests that arrive while a key is rendered for a build and
  // second (a new build, or a new second of a time-dependent answer) wait for that render, not another.
  const rendering = new Map<string, { buildId: string | null; nowSec: number; done: Promise<CachedResponse> }>();
  const app = new Hono();
  const trust = deps.trustedProxies ?? TRUST_NONE;
  const laneRequest = (c: Context, cacheableGet: boolean) => authRequest(c, cacheableGet, trust);

  // Middlewares, in order: errors and 404, CORS preflight, maintenance, the same-origin proxy; then
  // the route table (lane decision: middleware/lane.ts; request and answer: middleware/json-route.ts;
  // writer: middleware/response-writer.ts), 405s and the admin families.
  const cors = new Cors(deps.corsOrigins);
  const corsHeaders = (origin: string | undefined) => cors.headers(origin);
  const errorResponse = (err: unknown, path: string, origin: string | undefined) =>
    errorAnswer(cors, err, path, origin);
  installErrorHandlers(app, cors);
  app.options("*", cors.preflight());
  if (deps.maintenance) app.use("/api/*", maintenanceMode(deps.maintenance));
  app.all(
    "/_site-data/*",
    siteDataProxy({ origins: deps.corsOrigins, secret: deps.siteProxySecret, fetch: (req) => app.fetch(req) }),
  );

  const ctxBase = { store: deps.store, services: deps.services ?? {} };
  // Operator routes are served by the operator listener only (api/ops-app.ts); here their paths are 404 below.
  for (const route of ROUTES) {
    if (route.kind === "static") app.on(route.method, route.path, (c) => serveStatic(c, route));
    else if (route.kind === "json") app.on(route.method, route.path, (c) => serveJson(c, route));
    else if (route.kind === "write") app.on(route.method, route.path, (c) => serveWrite(c, route));
  }

  // Unknown share-image routes are 404 without a key (the /api/og/* family is exempt, spec 5.2).
  app.on(["GET", "HEAD"], "/api/og/*", () => {
    throw new HttpError(404, "Not found");
  });

  // 405 with `Allow` from the route table for declared paths; spec 4.4 for undeclared ones.
  const methodsByPath = new Map<string, Set<string>>();
  for (const r of ROUTES)
    if (r.lane !== "admin") methodsByPath.set(r.path, (methodsByPath.get(r.path) ?? new Set()).add(r.method));
  for (const [path, methods] of methodsByPath) {
    app.all(path, () => {
      throw new HttpError(405, "Method Not Allowed", { Allow: [...methods].join(", ") });
    });
  }
  // Admin path families are not served on the public host: 404 before key authentication (spec 5.2).
  const adminFamilies = [...ADMIN_PATH_FAMILIES, ...ROUTES.filter((r) => r.lane === "admin").map((r) => r.path)];
  const isAdminPath = (p: string) => adminFamilies.some((f) => p === f || p.startsWith(f.endsWith("-") ? f : `${f}/`));
  app.all("/api/*", async (c) => {
    if (isAdminPath(c.req.path)) throw new HttpError(404, "Not found");
    const m = c.req.method;
    if (m === "POST") throw new HttpError(405, "Method Not Allowed", { Allow: "GET" });
    if (m !== "GET" && m !== "HEAD") throw new HttpError(405, "Method Not Allowed", { Allow: "GET, POST" });
    // Unknown API paths: key first (401 without one), then 404 (spec 5.2).
    await auth.admit("apiKey", laneRequest(c, false));
    throw new HttpError(404, "Not found");
  });
  return { app, fastPath };

  /**
   * Answers a keyed GET on Node's response when its URL was served before and the cached response
   * is valid for the serving build, this service second and the accepted coding; false otherwise
   * (nothing written). Lane check and per-key limit run as on the app; their errors are answered here.
   * Synchronous (true or false) when the key was verified here before and limits are in-process
   * (LaneAuth.admitCachedKey); otherwise a promise of the same answer once the lane check ran.
   */
  function fastPath(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> {
    if (req.method !== "GET") return false;
    if (deps.maintenance) {
      const m = deps.maintenance.peek();
      if (m.state.enabled || !m.fresh) return false;
    }
    const known = cache.lookup(req.url ?? "");
    if (!known) return false;
    const { entry, tag: route } = known;
    const build = deps.store.current();
    if (!build || entry.buildId !== build.id || entry.nowSec !== serviceNow(build, deps.clockMode, nowMs()).now)
      return false;
    const h = fastPathHeaders(req.rawHeaders);
    if (!h) return false;
    const coding = codingFor(entry, h.acceptEncoding);
    const body = entry.bodies[coding];
    if (!body || h.ifNoneMatch !== undefined) return false;
    const origin = h.origin;
    try {
      if (laneFor(route, h.siteProxySecret) === "apiKey" && auth.admitCachedKey(h.apiKey)) {
        res.writeHead(200, sentHeaders(entry, corsHeaders(origin), coding, body)).end(body);
        return true;
      }
    } catch (err) {
      const r = errorResponse(err, route.path, origin);
      res.writeHead(r.status, r.headers).end(r.body);
      return true;
    }
    return admitAndSend(req, res, route, entry, coding, body);
  }

  /** The fast path's answer once the route's lane check (with I/O) ran: 200 with the cached body, or the lane's error. */
  async function admitAndSend(
    req: IncomingMessage,
    res: ServerResponse,
    route: JsonRoute,
    entry: CachedResponse,
    coding: ContentCoding,
    body: Uint8Array,
  ): Promise<boolean> {
    const h = req.headers;
    const origin = h.origin;
    try {
      const header = (n: string) => single(h[n.toLowerCase()]);
      await admitRoute(auth, route, {
        header,
        ip: clientAddress(req.socket.remoteAddress, header, trust),
        cacheableGet: true,
      });
    } catch (err) {
      const r = errorResponse(err, route.path, origin);
      res.writeHead(r.status, r.headers).end(r.body);
      return true;
    }
    res.writeHead(200, sentHeaders(entry, corsHeaders(origin), coding, body)).end(body);
    return true;
  }

  /**
   * A JSON route: lane check, then the cached response when it is valid for this build and second
   * (parameters were validated when it was made), else validate, run the handler and cache it.
   * Only the data-age headers are refreshed when just the second changed and the body has no `_meta`.
   */
  async function serveJson(c: Context, route: JsonRoute): Promise<Response> {
    const cors = corsHeaders(c.req.header("Origin"));
    const cacheable = route.method === "GET" && route.cacheable !== false && !route.notYetAvailable;
    await admitRoute(auth, route, laneRequest(c, cacheable));
    const build = await deps.store.build();
    const clock = serviceNow(build, deps.clockMode, nowMs());
    const raw = requestKey(c, route);
    let entry = cacheable ? cache.get(raw.key) : undefined;
    if (!entry || entry.buildId !== (build?.id ?? null) || (entry.nowSec !== clock.now && entry.timeDependent)) {
      const buildId = build?.id ?? null;
      const pending = cacheable ? rendering.get(raw.key) : undefined;
      if (pending && pending.buildId === buildId && pending.nowSec === clock.now) entry = await pending.done;
      else {
        const done = respond(route, {
          ...validate(route, raw, build, clock, ctxBase),
          ...(route.method === "POST" ? { readBody: bodyReader(c) } : {}),
        });
        if (cacheable) {
          rendering.set(raw.key, { buildId, nowSec: clock.now, done });
          done
            .finally(() => {
              if (rendering.get(raw.key)?.done === done) rendering.delete(raw.key);
            })
            .catch(() => undefined);
        }
        entry = await done;
        if (cacheable && cache.admit(raw.key)) cache.set(raw.key, entry);
      }
    } else if (entry.nowSec !== clock.now) {
      entry.headers = refreshedHeaders(route, entry, clock.now);
      entry.nowSec = clock.now;
      entry.sent = undefined;
    }
    const notModified = notModifiedHeaders(entry, c.req.header("If-None-Match"), cors);
    if (notModified) return new Response(null, { status: 304, headers: notModified });
    const coding = codingFor(entry, c.req.header("Accept-Encoding"));
    let body = entry.bodies[coding];
    if (!body) {
      body =
        (entry.file && build && (await build.file(entry.file, coding as "br" | "gzip"))) ||
        compressBody(entry.bodies.identity, coding as "br" | "gzip");
      if (cacheable) cache.addBody(raw.key, entry, coding, body);
    }
    if (cacheable && route.lane === "apiKey")
      cache.alias(c.req.raw.url.slice(c.req.raw.url.indexOf("/", 8)), raw.key, route);
    // A plain header object lets @hono/node-server write the response without building Headers.
    return new Response(body as Uint8Array<ArrayBuffer>, {
      status: 200,
      headers: sentHeaders(entry, cors, coding, body),
    });
  }

  /** A write route (spec 4.4): lane check, then the handler with the request's body reader; every answer `no-store`. */
  async function serveWrite(c: Context, route: WriteRoute): Promise<Response> {
    const req = laneRequest(c, false);
    await auth.admit(route.lane, req);
    const build = await deps.store.build();
    const clock = serviceNow(build, deps.clockMode, nowMs());
    const result = await route.handler({
      ...ctxBase,
      build,
      now: clock.now,
      clock: clock.clock,
      wallNow: clock.wallNow,
      ip: req.ip,
      header: req.header,
      readBody: bodyReader(c),
      viaSiteLane: c.req.header(SITE_PROXY_HEADER) !== undefined,
    });
    const headers: Record<string, string> = {
      ...corsHeaders(c.req.header("Origin")),
      ...result.headers,
      "Cache-Control": "no-store",
    };
    if (result.text !== undefined)
      return new Response(result.text, {
        status: result.status,
        headers: { ...headers, "Content-Type": "text/plain; charset=utf-8" },
      });
    return new Response(JSON.stringify(result.json ?? {}), {
      status: result.status,
      headers: { ...headers, "Content-Type": "application/json; charset=utf-8" },
    });
  }

  async function serveStatic(c: Context, route: StaticRoute): Promise<Response> {
    await auth.admit(route.lane, laneRequest(c, true));
    const build = await deps.store.build();
    const found = await route.handler(
      validate(route, requestKey(c, route), build, serviceNow(build, deps.clockMode, nowMs()), ctxBase),
    );
    if (!found) throw new HttpError(404, "Not found");
    const headers: Record<string, string> = {
      ...found.headers,
      "Content-Type": found.contentType,
      "Access-Control-Allow-Origin": "*",
      "Cache-Control": found.cacheControl ?? STATIC_CACHE,
      Vary: "Accept-Encoding",
    };
    const coding =
      found.encoded && found.bytes.byteLength >= MIN_COMPRESS_BYTES
        ? negotiate(c.req.header("Accept-Encoding"))
        : "identity";
    const encoded = coding === "identity" || !found.encoded ? null : await found.encoded(coding);
    if (encoded) headers["Content-Encoding"] = coding;
    return new Response((encoded ?? found.bytes) as Uint8Array<ArrayBuffer>, { status: 200, headers });
  }
}
