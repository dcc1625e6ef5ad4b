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
import type { OpsServices } from "./lib/ops-services.ts";
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

/**
 * The operator listener's app (spec 4.5, 5.6): every declared operator route, `GET /openapi.json`
 * (the operator description), and nothing else. Order per request: operator authentication (401,
 * 502) → method (405) → mutation checks (403: `X-Ballast-Admin: 1`, allowlisted Origin) → parameters
 * and body (400, 413) → idempotency bookkeeping (routes of the spec's list with `Idempotency-Key`) →
 * handler. Every response is `Cache-Control: no-store`; unknown paths are 404 after authentication.
 */
export function createOpsApp(deps: OpsAppDeps): Hono {
  const nowMs = deps.nowMs ?? Date.now;
  const sql = deps.keys.sqlClient;
  const idempotency = new IdempotencyStore(sql, nowMs);
  const ops: OpsServices = {
    keys: deps.keys,
    store: deps.store,
    clockMode: deps.clockMode,
    nowMs,
    jobs: deps.jobs,
    discovery: new DiscoveryStore(sql, nowMs),
    maintenance: deps.maintenance,
    ledgerPath: deps.ledgerPath,
    dataDir: deps.dataDir,
    jobWaitMs: deps.jobWaitMs ?? 4000,
  };
  const routes = deps.routes ?? ADMIN_ROUTES;
  const app = new Hono();

  const cors = (c: Context): Record<string, string> => {
    const origin = c.req.header("Origin");
    return origin && deps.auth.originAllowed(origin) ? { "Access-Control-Allow-Origin": origin, Vary: "Origin" } : {};
  };
  const json = (c: Context, status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { ...cors(c), ...headers, "Content-Type": JSON_TYPE, "Cache-Control": NO_STORE },
    });

  app.onError((err, c) => {
    const e = errorOf(err, c.req.path);
    return json(c, e.status, e.body, e.headers);
  });

  app.options("*", (c) => {
    const origin = c.req.header("Origin");
    if (!origin || !deps.auth.originAllowed(origin)) throw new HttpError(403, "Origin not allowed");
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
  });

  app.get("/openapi.json", async (c) => {
    await deps.auth.authenticate(c.req);
    return json(c, 200, buildOperatorOpenApi(routes));
  });

  const methodsByPath = new Map<string, string[]>();
  for (const r of routes) {
    methodsByPath.set(r.path, [...(methodsByPath.get(r.path) ?? []), r.method]);
    app.on(r.method, r.path, (c) => serve(c, r));
  }
  for (const [path, methods] of methodsByPath) {
    app.all(path, async (c) => {
      await deps.auth.authenticate(c.req);
      throw new HttpError(405, "Method Not Allowed", { Allow: methods.join(", ") });
    });
  }
  app.all("*", async (c) => {
    await deps.auth.authenticate(c.req);
    throw new HttpError(404, "Not found");
  });
  return app;

  async function serve(c: Context, route: AdminRoute): Promise<Response> {
    const operator = await deps.auth.authenticate(c.req);
    const url = new URL(c.req.url);
    const rawQuery = Object.fromEntries(url.searchParams);
    if (route.method === "GET" && route.getAllowed && !route.getAllowed(rawQuery)) {
      throw new HttpError(405, "Method Not Allowed. Use POST for this endpoint unless dry-run=true.", {
        Allow: "POST",
      });
    }
    if (route.mutating) deps.auth.checkMutation(c.req);
    const bodyText = route.method === "POST" ? await readBody(c) : "";
    const ctx = {
      params: validateParams(route, c.req.param() as Record<string, string>),
      query: validateQuery(route, url),
      body: validateBody(route, bodyText),
      ops,
      operator,
    };
    const exec = async (): Promise<StoredResponse & { headers?: Record<string, string> }> => {
      try {
        const r = await route.handler(ctx);
        return { status: r.status ?? 200, body: r.body };
      } catch (err) {
        if (
          !(err instanceof HttpError) &&
          !(err instanceof StateStoreUnavailableError) &&
          !(err instanceof KeyInputError)
        )
          throw err;
        const e = errorOf(err, url.pathname);
        return { status: e.status, body: e.body, headers: e.headers };
      }
    };
    const key = route.idempotent ? idempotencyKeyOf(c.req.header("Idempotency-Key")) : null;
    audit(operator, route, url);
    if (!key) {
      const r = await exec();
      return json(c, r.status, r.body, r.headers);
    }
    let live: Record<string, string> | undefined;
    const out = await idempotency.run(route.action, key, requestFingerprint(route.method, url, bodyText), async () => {
      const r = await exec();
      live = r.headers;
      return { status: r.status, body: r.body };
    });
    const body = out.replay && out.status === 202 ? await currentJobState(out.body) : out.body;
    return json(c, out.status, body, {
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
  async function currentJobState(body: unknown): Promise<unknown> {
    const requestId = (body as { requestId?: unknown } | null)?.requestId;
    if (typeof requestId !== "string") return body;
    const job = await deps.jobs.get(requestId).catch(() => null);
    return job ? { ...(body as object), status: job.status } : body;
  }

  /** The request body as text, at most OPS_BODY_MAX bytes (413 beyond). */
  async function readBody(c: Context): Promise<string> {
    const declared = Number(c.req.header("Content-Length") ?? "0");
    if (declared > OPS_BODY_MAX) throw new HttpError(413, `Request body too large (at most ${OPS_BODY_MAX} bytes)`);
    const buf = await c.req.arrayBuffer();
    if (buf.byteLength > OPS_BODY_MAX)
      throw new HttpError(413, `Request body too large (at most ${OPS_BODY_MAX} bytes)`);
    return Buffer.from(buf).toString("utf8");
  }

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
