import { Hono, type Context } from "hono";
import { z } from "zod";
import { type ApiKeyRecord, type KeyStore } from "./lib/key-store.ts";
import { assessFreshness, CACHE_PROFILES, freshnessHeaders, GENERIC_RATIOS, metaBlock } from "./lib/freshness.ts";
import { HttpError } from "./lib/http-error.ts";
import type { PublishedStore, ServingBuild } from "./lib/published.ts";
import { PublishedDb } from "./lib/published-db.ts";
import type { KeyRateLimiter } from "./lib/rate-limit.ts";
import { buildHealth } from "./health.ts";
import { ROUTES, type RouteDef } from "./routes.ts";
import { buildOpenApi } from "./openapi.ts";

/** Per-request variables: the CORS headers every /api response carries. */
export type ApiEnv = { Variables: { cors: Record<string, string> } };
type ApiContext = Context<ApiEnv>;

/** Dependencies of the app; the server wires real ones, tests wire their own. */
export interface AppDeps {
  store: PublishedStore;
  /** Read-only DuckDB over the serving build; defaults to one over `store`. */
  db?: PublishedDb;
  keys: KeyStore;
  limiter: KeyRateLimiter;
  /** Allowed browser origins; the first is echoed for requests without Origin (spec 1 rule 2). */
  corsOrigins: string[];
  /** `auto`: replay clock for builds made from recorded captures, wall clock otherwise. */
  clockMode: "auto" | "wall" | "replay";
  /** Wall clock in ms (injectable). */
  nowMs?: () => number;
}

const UNAUTHORIZED = "Unauthorized: valid X-API-Key required. /api/health is free.";
const AUTH_CACHE_TTL_MS = 5000;
const AUTH_CACHE_MAX = 2048;
const CORS_METHODS = "GET, POST, OPTIONS";
const CORS_ALLOW_HEADERS = "Content-Type, Idempotency-Key, X-API-Key";
const CORS_EXPOSE_HEADERS = "X-Data-Age, X-Data-Updated-At, X-Data-Freshness, X-Data-Freshness-Reason, Warning, Retry-After";

/** Current time (Unix s) for a build under the clock mode: replay = build as-of + time since first seen. */
export function serviceNow(build: ServingBuild | null, mode: AppDeps["clockMode"], nowMs: number): { now: number; clock: "replay" | "wall" } {
  if (build && mode !== "wall" && (mode === "replay" || build.manifest.clock === "replay")) {
    return { now: build.manifest.asOf + Math.floor((nowMs - build.firstSeenMs) / 1000), clock: "replay" };
  }
  return { now: Math.floor(nowMs / 1000), clock: "wall" };
}

function validationMessage(where: string, err: z.ZodError): string {
  const issue = err.issues[0];
  const name = issue?.path.length ? String(issue.path[0]) : where;
  return `Invalid parameter ${name}: ${issue?.message ?? "invalid"}`;
}

/** Builds the Hono app: CORS, method gating, key auth, rate limits, freshness, routes, health, static files. */
export function createApp(deps: AppDeps): Hono<ApiEnv> {
  const nowMs = deps.nowMs ?? Date.now;
  const app = new Hono<ApiEnv>();
  const authCache = new Map<string, { record: ApiKeyRecord; at: number }>();

  app.onError((err, c) => {
    for (const [k, v] of Object.entries(c.get("cors") ?? {})) c.header(k, v);
    if (err instanceof HttpError) {
      for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
      if (err.status >= 400) c.header("Cache-Control", "no-store");
      return c.json({ error: err.message }, err.status);
    }
    process.stderr.write(`${JSON.stringify({ level: "error", stage: "api", msg: (err as Error).message })}\n`);
    c.header("Cache-Control", "no-store");
    return c.json({ error: "Internal Server Error" }, 500);
  });

  // CORS (spec 1 rule 2). The middleware only decides the headers; every /api response spreads
  // them into a plain header object. Rewriting finished Responses (hono/cors) or building undici
  // Headers per request cost half the small route's throughput in `make bench`.
  const corsByOrigin = new Map<string, Record<string, string>>();
  const corsHeaders = (origin: string | undefined): Record<string, string> => {
    const k = origin ?? "";
    let h = corsByOrigin.get(k);
    if (!h) {
      const allowed = !origin ? deps.corsOrigins[0] : deps.corsOrigins.includes(origin) ? origin : undefined;
      h = { ...(allowed ? { "Access-Control-Allow-Origin": allowed } : {}), ...(origin ? { Vary: "Origin" } : {}), "Access-Control-Expose-Headers": CORS_EXPOSE_HEADERS };
      if (corsByOrigin.size >= AUTH_CACHE_MAX) corsByOrigin.clear();
      corsByOrigin.set(k, h);
    }
    return h;
  };
  app.use("/api/*", async (c, next) => {
    const origin = c.req.header("Origin");
    if (c.req.method === "OPTIONS") {
      const allowed = !origin ? deps.corsOrigins[0] : deps.corsOrigins.includes(origin) ? origin : undefined;
      if (origin && !allowed) return c.json({ error: "Origin not allowed" }, 403);
      return c.body(null, 204, {
        ...(allowed ? { "Access-Control-Allow-Origin": allowed } : {}), Vary: "Origin",
        "Access-Control-Allow-Methods": CORS_METHODS, "Access-Control-Allow-Headers": CORS_ALLOW_HEADERS, "Access-Control-Max-Age": "86400",
      });
    }
    c.set("cors", corsHeaders(origin));
    // Method gating (spec 4.4): unknown POST → 405 Allow: GET; other verbs → 405 Allow: GET, POST.
    const m = c.req.method;
    if (m === "POST") throw new HttpError(405, "Method Not Allowed", { Allow: "GET" });
    if (m !== "GET" && m !== "HEAD") throw new HttpError(405, "Method Not Allowed", { Allow: "GET, POST" });
    await next();
  });

  const requireKey = async (c: ApiContext): Promise<void> => {
    const token = c.req.header("X-API-Key");
    if (!token) throw new HttpError(401, UNAUTHORIZED);
    const nowWall = nowMs();
    let entry = authCache.get(token);
    if (!entry || nowWall - entry.at > AUTH_CACHE_TTL_MS) {
      let record: ApiKeyRecord | null;
      try {
        record = await deps.keys.verify(token, Math.floor(nowWall / 1000));
      } catch {
        throw new HttpError(503, "Public API temporarily unavailable", { "Retry-After": "60" });
      }
      if (!record) { authCache.delete(token); throw new HttpError(401, UNAUTHORIZED); }
      if (authCache.size >= AUTH_CACHE_MAX) authCache.delete(authCache.keys().next().value!);
      entry = { record, at: nowWall };
      authCache.set(token, entry);
    }
    let res;
    try {
      res = await deps.limiter.consume(entry.record.id, entry.record.rateLimitPerMinute);
    } catch {
      throw new HttpError(503, "Public API temporarily unavailable", { "Retry-After": "60" });
    }
    if (!res.ok) throw new HttpError(429, "Rate limit exceeded", { "Retry-After": String(res.retryAfterSec) });
  };

  app.get("/api/health", async (c) => {
    const build = await deps.store.build();
    const clock = serviceNow(build, deps.clockMode, nowMs());
    return c.json(buildHealth(build, clock.now, clock.clock), 200, { ...c.get("cors"), "Cache-Control": CACHE_PROFILES.realtime });
  });

  const db = deps.db ?? new PublishedDb(deps.store);
  for (const route of ROUTES) mountRoute(app, route, deps, db, requireKey, nowMs);

  app.get("/openapi.json", (c) => {
    c.header("Access-Control-Allow-Origin", "*");
    return c.json(buildOpenApi());
  });

  // Static artifacts (spec 1): no key, `Access-Control-Allow-Origin: *`.
  const serveStatic = async (c: Context, bytes: Uint8Array | null, path: string) => {
    if (!bytes) return c.json({ error: "Not found" }, 404, { "Access-Control-Allow-Origin": "*" });
    const type = path.endsWith(".csv") ? "text/csv; charset=utf-8" : path.endsWith(".ndjson") ? "application/x-ndjson" : path.endsWith(".duckdb") ? "application/octet-stream" : "application/json";
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, { "Content-Type": type, "Access-Control-Allow-Origin": "*", "Cache-Control": "public, max-age=300" });
  };
  app.get("/datasets/:topic/:file", async (c) => {
    const { topic, file } = c.req.param();
    const m = /^(latest|\d{4}-\d{2}-\d{2})\.(csv|json|ndjson)$/.exec(file);
    if (!m || !/^[a-z0-9-]+$/.test(topic)) return serveStatic(c, null, file);
    if (m[1] === "latest") {
      const build = await deps.store.build();
      const dated = [...(build?.files.keys() ?? [])].filter((p) => p.startsWith(`datasets/${topic}/`) && p.endsWith(`.${m[2]}`)).sort().at(-1);
      return serveStatic(c, dated ? await deps.store.file(dated) : null, file);
    }
    return serveStatic(c, await deps.store.object(`datasets/${topic}/${file}`), file);
  });
  app.get("/datasets/:file", async (c) => {
    const file = c.req.param("file");
    if (!/^[a-z0-9-]+\.(csv|json)$/.test(file)) return serveStatic(c, null, file);
    return serveStatic(c, await deps.store.file(`datasets/${file}`), file);
  });
  app.get("/sheets/:file", async (c) => {
    const file = c.req.param("file");
    return serveStatic(c, /^[a-z0-9-]+\.csv$/.test(file) ? await deps.store.file(`sheets/${file}`) : null, file);
  });
  app.get("/ballast.duckdb", async (c) => serveStatic(c, await deps.store.file("ballast.duckdb"), "ballast.duckdb"));

  // Unknown API paths: key first (401 without one), then 404 (spec 5.2).
  app.all("/api/*", async (c) => {
    await requireKey(c);
    throw new HttpError(404, "Not found");
  });
  app.notFound((c) => c.json({ error: "Not found" }, 404));
  return app;
}

/** A finished read response: body text and plain headers, valid for one build and one service second. */
interface CachedResponse {
  buildId: string | undefined;
  nowSec: number;
  body: string;
  headers: Record<string, string>;
}

/**
 * Finished responses of the read routes keyed by URL and Origin. Every read route is a pure
 * function of (serving build, path, query, service second), so a response computed once is
 * reused until the build or the second changes. Bounded by total body size (cleared past it).
 */
class ResponseCache {
  private readonly entries = new Map<string, CachedResponse>();
  private bytes = 0;
  constructor(private readonly maxBytes = 64 * 1024 * 1024) {}

  get(key: string, buildId: string | undefined, nowSec: number): CachedResponse | undefined {
    const e = this.entries.get(key);
    return e && e.nowSec === nowSec && e.buildId === buildId ? e : undefined;
  }

  set(key: string, entry: CachedResponse): void {
    const prev = this.entries.get(key);
    if (prev) this.bytes -= prev.body.length;
    if (this.bytes + entry.body.length > this.maxBytes) { this.entries.clear(); this.bytes = 0; }
    this.entries.set(key, entry);
    this.bytes += entry.body.length;
  }
}

function mountRoute(app: Hono<ApiEnv>, route: RouteDef, deps: AppDeps, db: PublishedDb, requireKey: (c: ApiContext) => Promise<void>, nowMs: () => number): void {
  const cache = new ResponseCache();
  app.get(route.path, async (c) => {
    if (route.auth === "apiKey") await requireKey(c);
    const build = await deps.store.build();
    const buildId = build?.manifest.buildId;
    const { now } = serviceNow(build, deps.clockMode, nowMs());
    const key = `${c.req.header("Origin") ?? ""}\n${c.req.url}`;
    let hit = cache.get(key, buildId, now);
    if (!hit) {
      let params: Record<string, string> = c.req.param() as Record<string, string>;
      let query: Record<string, unknown> = {};
      if (route.params) {
        const r = route.params.safeParse(params);
        if (!r.success) throw new HttpError(400, validationMessage("path", r.error));
        params = r.data as Record<string, string>;
      }
      if (route.query) {
        const raw = c.req.query();
        const known = Object.keys(route.query.shape);
        for (const k of Object.keys(raw)) if (!known.includes(k)) throw new HttpError(400, `Invalid parameter ${k}: unknown parameter`);
        const r = route.query.safeParse(raw);
        if (!r.success) throw new HttpError(400, validationMessage("query", r.error));
        query = r.data as Record<string, unknown>;
      }
      const result = await route.handler({ store: deps.store, db, query, params });
      const f = assessFreshness(now, result.dataAsOf, route.maxAgeSec, route.ratios ?? GENERIC_RATIOS);
      let body = result.json ?? JSON.stringify(result.payload);
      if (route.meta && body.endsWith("}")) {
        const meta: Record<string, unknown> = { ...metaBlock(f), ...(result.meta ?? {}) };
        if ("degraded" in meta) { meta.degraded = meta.degraded === true || f.status === "stale"; meta.freshness = f.status; }
        body = `${body.slice(0, -1)},"_meta":${JSON.stringify(meta)}}`;
      }
      const headers = { ...c.get("cors"), ...freshnessHeaders(f, route.cache), "Content-Type": "application/json; charset=utf-8" };
      hit = { buildId, nowSec: now, body, headers };
      cache.set(key, hit);
    }
    // A plain header object lets @hono/node-server write the response without building Headers.
    return new Response(hit.body, { status: 200, headers: hit.headers });
  });
}
