import { Hono, type Context } from "hono";
import type { z } from "zod";
import type { ClockMode } from "./lib/clock.ts";
import { DiscoveryStore } from "./lib/discovery.ts";
import { HttpError } from "./lib/http-error.ts";
import { IdempotencyStore, idempotencyKeyOf, requestFingerprint, type StoredResponse } from "./lib/idempotency.ts";
import type { JobRunner } from "./lib/jobs.ts";
import { KeyInputError, type KeyStore, StateStoreUnavailableError } from "./lib/key-store.ts";
import { apiLog, errorMessage } from "./lib/log.ts";
import type { MaintenanceGate } from "./lib/maintenance.ts";
import { ADMIN_HEADER, ACCESS_JWT_HEADER, type OperatorAuth, type OperatorIdentity } from "./lib/ops-access.ts";
import type { AdminContext, OpsServices } from "./lib/ops-services.ts";
import type { PublishedStore } from "./lib/published.ts";
import { buildOperatorOpenApi } from "./ops-openapi.ts";
import { ADMIN_ROUTES } from "./routes/admin.ts";
import type { AdminRoute } from "./routes/route.ts";

/** Dependencies of the operator app; `api/server.ts` wires real ones, tests their own. */
export interface OpsAppDeps {
  auth: OperatorAuth;
  keys: KeyStore;
  store: PublishedStore;
  clockMode: ClockMode;
  nowMs?: () => number;
  maintenance: MaintenanceGate;
  jobs: JobRunner;
  /** On-chain ledger of the on-chain jobs. */
  ledgerPath: string;
  /** Data dir the build jobs publish into. */
  dataDir: string;
  /** How long a job request waits for its job before answering 202 (ms); default 4000. */
  jobWaitMs?: number;
  /** Routes served (default ADMIN_ROUTES; tests may add their own). */
  routes?: AdminRoute[];
}

/** Largest JSON body an operator route reads (bytes). */
export const OPS_BODY_MAX = 64 * 1024;

const JSON_TYPE = "application/json; charset=utf-8";
const NO_STORE = "no-store";

/** `Invalid parameter <name>: <message>` of the first zod issue. */
function invalid(where: string, err: z.ZodError): HttpError {
  const issue = err.issues[0];
  const name = issue?.path.length ? issue.path.map(String).join(".") : where;
  return new HttpError(400, `Invalid parameter ${name}: ${issue?.message ?? "invalid"}`);
}

/** `{ error }` JSON of a thrown error (spec 7); store failures are 503, key input errors 400, anything else a logged 500. */
function errorOf(err: unknown, path: string): { status: number; headers: Record<string, string>; body: unknown } {
  if (err instanceof HttpError)
    return { status: err.status, headers: err.headers, body: { error: err.message, ...err.extra } };
  if (err instanceof StateStoreUnavailableError)
    return { status: 503, headers: { "Retry-After": "60" }, body: { error: "Public API temporarily unavailable" } };
  if (err instanceof KeyInputError)
    return { status: 400, headers: {}, body: { error: `Invalid parameter ${err.field}: ${err.message}` } };
  apiLog("error", "ops", errorMessage(err), { path });
  return { status: 500, headers: {}, body: { error: "Internal Server Error" } };
}

/** What serving one operator route reads: authentication, the routes' services, idempotency bookkeeping. */
interface OpsRouteEnv {
  auth: OperatorAuth;
  ops: OpsServices;
  idempotency: IdempotencyStore;
}

/** The services operator routes run with (`OpsServices`): the deps, discovery over the state store, job wait default 4000 ms. */
function opsServicesOf(deps: OpsAppDeps, nowMs: () => number): OpsServices {
  return {
    keys: deps.keys,
    store: deps.store,
    clockMode: deps.clockMode,
    nowMs,
    jobs: deps.jobs,
    discovery: new DiscoveryStore(deps.keys.sqlClient, nowMs),
    maintenance: deps.maintenance,
    ledgerPath: deps.ledgerPath,
    dataDir: deps.dataDir,
    jobWaitMs: deps.jobWaitMs ?? 4000,
  };
}

/** CORS headers of a response: the request's Origin echoed when the operator lane allows it, else none. */
function corsHeaders(auth: OperatorAuth, c: Context): Record<string, string> {
  const origin = c.req.header("Origin");
  return origin && auth.originAllowed(origin) ? { "Access-Control-Allow-Origin": origin, Vary: "Origin" } : {};
}

/** A JSON response of the operator lane: CORS headers, then `headers`, then JSON type and `Cache-Control: no-store`. */
function jsonResponse(
  auth: OperatorAuth,
  c: Context,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...corsHeaders(auth, c), ...headers, "Content-Type": JSON_TYPE, "Cache-Control": NO_STORE },
  });
}

/** Answer of a CORS preflight: 204 with the allowed methods and headers for an allowlisted Origin. @throws HttpError 403 for any other. */
function preflight(auth: OperatorAuth, c: Context): Response {
  const origin = c.req.header("Origin");
  if (!origin || !auth.originAllowed(origin)) throw new HttpError(403, "Origin not allowed");
  return new Response(null, {
    status: 204,
    headers: {
      "Access-Control-Allow-Origin": origin,
      Vary: "Origin",
      "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
      "Access-Control-Max-Age": "600",
      "Access-Control-Allow-Headers": `Content-Type, Idempotency-Key, ${ADMIN_HEADER}, ${ACCESS_JWT_HEADER}`,
      "Cache-Control": NO_STORE,
    },
  });
}

/**
 * Mounts every route on `app`, then per declared path a 405 for its other methods (`Allow` lists the
 * declared ones) and a 404 for any other path, both after authentication.
 */
function mountRoutes(app: Hono, routes: AdminRoute[], env: OpsRouteEnv): void {
  const methodsByPath = new Map<string, string[]>();
  for (const r of routes) {
    methodsByPath.set(r.path, [...(methodsByPath.get(r.path) ?? []), r.method]);
    app.on(r.method, r.path, (c) => serveRoute(c, r, env));
  }
  for (const [path, methods] of methodsByPath) {
    app.all(path, async (c) => {
      await env.auth.authenticate(c.req);
      throw new HttpError(405, "Method Not Allowed", { Allow: methods.join(", ") });
    });
  }
  app.all("*", async (c) => {
    await env.auth.authenticate(c.req);
    throw new HttpError(404, "Not found");
  });
}

/**
 * The operator listener's app (spec 4.5, 5.6): every declared operator route, `GET /openapi.json`
 * (the operator description), and nothing else. Order per request: operator authentication (401,
 * 502) → method (405) → mutation checks (403: `X-Ballast-Admin: 1`, allowlisted Origin) → parameters
 * and body (400, 413) → idempotency bookkeeping (routes of the spec's list with `Idempotency-Key`) →
 * handler. Every response is `Cache-Control: no-store`; unknown paths are 404 after authentication.
 */
export function createOpsApp(deps: OpsAppDeps): Hono {
  const nowMs = deps.nowMs ?? Date.now;
  const env: OpsRouteEnv = {
    auth: deps.auth,
    ops: opsServicesOf(deps, nowMs),
    idempotency: new IdempotencyStore(deps.keys.sqlClient, nowMs),
  };
  const routes = deps.routes ?? ADMIN_ROUTES;
  const app = new Hono();
  app.onError((err, c) => {
    const e = errorOf(err, c.req.path);
    return jsonResponse(deps.auth, c, e.status, e.body, e.headers);
  });
  app.options("*", (c) => preflight(deps.auth, c));
  app.get("/openapi.json", async (c) => {
    await deps.auth.authenticate(c.req);
    return jsonResponse(deps.auth, c, 200, buildOperatorOpenApi(routes));
  });
  mountRoutes(app, routes, env);
  return app;
}

/**
 * Runs a route's handler on its validated request; the errors a route may answer with (HttpError,
 * state store unavailable, key input) become their responses (with their headers), anything else throws.
 */
async function runHandler(
  route: AdminRoute,
  ctx: AdminContext,
  path: string,
): Promise<StoredResponse & { headers?: Record<string, string> }> {
  try {
    const r = await route.handler(ctx);
    return { status: r.status ?? 200, body: r.body };
  } catch (err) {
    if (!(err instanceof HttpError) && !(err instanceof StateStoreUnavailableError) && !(err instanceof KeyInputError))
      throw err;
    const e = errorOf(err, path);
    return { status: e.status, body: e.body, headers: e.headers };
  }
}

/**
 * Serves one operator route in the order of `createOpsApp`: authentication, GET refusal (405), mutation
 * checks, body, parameters, audit line, then the handler, through the idempotency store when the route
 * is idempotent and the request carries an `Idempotency-Key` (answer headers `Idempotency-Key`,
 * `X-Idempotent-Replay`).
 */
async function serveRoute(c: Context, route: AdminRoute, env: OpsRouteEnv): Promise<Response> {
  const { auth } = env;
  const operator = await auth.authenticate(c.req);
  const url = new URL(c.req.url);
  const rawQuery = Object.fromEntries(url.searchParams);
  if (route.method === "GET" && route.getAllowed && !route.getAllowed(rawQuery)) {
    throw new HttpError(405, "Method Not Allowed. Use POST for this endpoint unless dry-run=true.", {
      Allow: "POST",
    });
  }
  if (route.mutating) auth.checkMutation(c.req);
  const bodyText = route.method === "POST" ? await readBody(c) : "";
  const ctx = {
    params: validateParams(route, c.req.param() as Record<string, string>),
    query: validateQuery(route, url),
    body: validateBody(route, bodyText),
    ops: env.ops,
    operator,
  };
  const exec = () => runHandler(route, ctx, url.pathname);
  const key = route.idempotent ? idempotencyKeyOf(c.req.header("Idempotency-Key")) : null;
  audit(operator, route, url);
  if (!key) {
    const r = await exec();
    return jsonResponse(auth, c, r.status, r.body, r.headers);
  }
  let live: Record<string, string> | undefined;
  const out = await env.idempotency.run(
    route.action,
    key,
    requestFingerprint(route.method, url, bodyText),
    async () => {
      const r = await exec();
      live = r.headers;
      return { status: r.status, body: r.body };
    },
  );
  const body = out.replay && out.status === 202 ? await currentJobState(env.ops.jobs, out.body) : out.body;
  return jsonResponse(auth, c, out.status, body, {
    ...(out.replay ? {} : (live ?? {})),
    "Idempotency-Key": key,
    "X-Idempotent-Replay": String(out.replay),
  });
}

/**
 * A replayed 202 (a job that was still running) with its job's current `status` (e.g. `interrupted`
 * when its server stopped, `succeeded`): a replay never repeats a stale `running`. As stored when the
 * job cannot be read.
 */
async function currentJobState(jobs: JobRunner, body: unknown): Promise<unknown> {
  const requestId = (body as { requestId?: unknown } | null)?.requestId;
  if (typeof requestId !== "string") return body;
  const job = await jobs.get(requestId).catch(() => null);
  return job ? { ...(body as object), status: job.status } : body;
}

/** The request body as text, at most OPS_BODY_MAX bytes (413 beyond). */
async function readBody(c: Context): Promise<string> {
  const declared = Number(c.req.header("Content-Length") ?? "0");
  if (declared > OPS_BODY_MAX) throw new HttpError(413, `Request body too large (at most ${OPS_BODY_MAX} bytes)`);
  const buf = await c.req.arrayBuffer();
  if (buf.byteLength > OPS_BODY_MAX) throw new HttpError(413, `Request body too large (at most ${OPS_BODY_MAX} bytes)`);
  return Buffer.from(buf).toString("utf8");
}

/** Path parameters through the route's schema (400 when invalid); as given without one. */
function validateParams(route: AdminRoute, raw: Record<string, string>): Record<string, string> {
  if (!route.params) return raw;
  const r = route.params.safeParse(raw);
  if (!r.success) throw invalid("path", r.error);
  return r.data as Record<string, string>;
}

/** Query parameters: unknown or repeated names are 400; then the route's schema. */
function validateQuery(route: AdminRoute, url: URL): Record<string, unknown> {
  const known = route.query?.shape ?? {};
  const seen = new Set<string>();
  for (const k of url.searchParams.keys()) {
    if (!Object.hasOwn(known, k)) throw new HttpError(400, `Invalid parameter ${k}: unknown parameter`);
    if (seen.has(k)) throw new HttpError(400, `Invalid parameter ${k}: given more than once`);
    seen.add(k);
  }
  if (!route.query) return {};
  const r = route.query.safeParse(Object.fromEntries(url.searchParams));
  if (!r.success) throw invalid("query", r.error);
  return r.data as Record<string, unknown>;
}

/** The JSON body of routes that declare one; others accept none (or `{}`). */
function validateBody(route: AdminRoute, text: string): unknown {
  const trimmed = text.trim();
  if (!route.body) {
    if (trimmed && trimmed !== "{}")
      throw new HttpError(400, "Invalid body: this route takes its parameters in the query string");
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = trimmed ? JSON.parse(trimmed) : {};
  } catch {
    throw new HttpError(400, "Invalid body: not JSON");
  }
  const r = route.body.safeParse(parsed);
  if (!r.success) throw invalid("body", r.error);
  return r.data;
}

/**
 * One log line per admitted operator call: who, what (never secrets or bodies). What a call changed
 * (before and after) is logged once it took effect, by the route (`auditChange`, api/lib/ops-services.ts).
 */
function audit(operator: OperatorIdentity, route: AdminRoute, url: URL): void {
  apiLog("info", "ops", "operator request", {
    operator: operator.subject,
    via: operator.kind,
    action: route.action,
    method: route.method,
    path: url.pathname,
  });
}
