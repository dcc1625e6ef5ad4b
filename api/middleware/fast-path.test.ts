import { Hono } from "hono";
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import type { LaneAuth } from "../lib/auth.ts";
import { TRUST_NONE } from "../lib/client-address.ts";
import { HttpError } from "../lib/http-error.ts";
import type { PublishedStore, ServingBuild } from "../lib/published.ts";
import type { JsonRoute } from "../routes/route.ts";
import { Cors } from "./cors.ts";
import { installErrorHandlers } from "./errors.ts";
import { nodeFastPath, withFastPath } from "./fast-path.ts";
import { render } from "./json-route.ts";
import { lane } from "./lane.ts";
import { RouteResponses } from "./response-cache.ts";
import { validate } from "./validate.ts";

const listRoute: JsonRoute = {
  kind: "json",
  operationId: "getList",
  method: "GET",
  path: "/api/list",
  lane: "apiKey",
  tag: "t",
  cache: "standard",
  meta: false,
  maxAgeSec: 600,
  summary: "list",
  handler: async (ctx) => ({ payload: { rows: [1, 2, 3] }, dataAsOf: ctx.now - 5 }),
};

/**
 * The app's chain for `route` and the fast path over the same lane check and cache. Keys: `hot` is held
 * in memory (decided without I/O, 2 per minute), `cold` needs the store, anything else is invalid.
 */
function service(opts: { meta?: boolean; renders?: { count: number; gate?: Promise<void> } } = {}) {
  const renders = opts.renders;
  const route: JsonRoute = {
    ...listRoute,
    meta: opts.meta ?? false,
    ...(renders && {
      handler: async (ctx) => {
        renders.count++;
        await renders.gate;
        return { payload: { rows: [1, 2, 3] }, dataAsOf: ctx.now - 5 };
      },
    }),
  };
  const build = { id: "b1", manifest: { clock: "wall" }, file: async () => null } as unknown as ServingBuild;
  const store = { build: async () => build, current: () => build } as unknown as PublishedStore;
  let hotUses = 0;
  const auth = {
    admit: async (_lane: string, req: { header(n: string): string | undefined }) => {
      if (req.header("X-API-Key") !== "cold" && req.header("X-API-Key") !== "hot")
        throw new HttpError(401, "Unauthorized");
    },
    admitCachedKey: (token: string | undefined) => {
      if (token !== "hot") return false;
      if (++hotUses > 2) throw new HttpError(429, "Rate limit exceeded", { "Retry-After": "60" });
      return true;
    },
  } as unknown as LaneAuth;
  const cors = new Cors(["https://a.example"]);
  // One service second until the test moves the clock: a cached answer is current only within its second.
  const clock = { ms: Math.floor(Date.now() / 1000) * 1000 };
  const deps = { store, clockMode: "wall" as const, nowMs: () => clock.ms, services: {} };
  const responses = new RouteResponses({ ...deps, cors });
  const app = new Hono();
  installErrorHandlers(app, cors);
  app.get(route.path, lane(route, auth), validate(route, deps), responses.responseCache(route), render(route));
  return { app, clock, fast: nodeFastPath({ auth, responses, cors, trust: TRUST_NONE }) };
}

/** A Node request and a response that records what was written. */
function exchange(method: string, url: string, headers: Record<string, string>) {
  const req = {
    method,
    url,
    rawHeaders: Object.entries(headers).flat(),
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
    socket: { remoteAddress: "192.0.2.1" },
  } as unknown as IncomingMessage;
  const written: { status?: number; headers?: Record<string, string>; body?: string } = {};
  const res = {
    headersSent: false,
    // Node's writeHead takes an object or a flat list (name, value, …); recorded as an object.
    writeHead(status: number, h: Record<string, string> | string[]) {
      written.status = status;
      written.headers = Array.isArray(h) ? Object.fromEntries(h.flatMap((v, i) => (i % 2 ? [] : [[v, h[i + 1]]]))) : h;
      return this;
    },
    end(body: Uint8Array | string) {
      written.body = Buffer.from(body).toString("utf8");
    },
  } as unknown as ServerResponse;
  return { req, res, written };
}

describe("the Node fast path (the app's lane and cache functions on Node's response)", () => {
  it("answers a URL the app answered from its cache with the app's bytes and headers; the per-key limit still counts", async () => {
    const { app, fast } = service();
    await app.request("/api/list", { headers: { "X-API-Key": "cold" } });
    const viaApp = await app.request("/api/list", { headers: { "X-API-Key": "cold" } });
    const appBody = await viaApp.text();
    const one = exchange("GET", "/api/list", { "X-API-Key": "hot" });
    expect(fast(one.req, one.res)).toBe(true); // decided without I/O
    expect(one.written.status).toBe(200);
    expect(one.written.body).toBe(appBody);
    const lower = Object.entries(one.written.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]);
    expect(Object.fromEntries(lower)).toEqual(Object.fromEntries(viaApp.headers));
    fast(one.req, one.res);
    const third = exchange("GET", "/api/list", { "X-API-Key": "hot" });
    expect(fast(third.req, third.res)).toBe(true);
    expect(third.written.status).toBe(429);
    expect(JSON.parse(third.written.body ?? "")).toEqual({ error: "Rate limit exceeded" });
    expect(third.written.headers?.["Retry-After"]).toBe("60");
  });

  it("in a later second answers a body without _meta itself, its data-age header moved; a body with _meta goes to the app", async () => {
    for (const meta of [false, true]) {
      const { app, clock, fast } = service({ meta });
      for (let i = 0; i < 2; i++) await app.request("/api/list", { headers: { "X-API-Key": "cold" } });
      const before = exchange("GET", "/api/list", { "X-API-Key": "hot" });
      expect(fast(before.req, before.res)).toBe(true);
      clock.ms += 3000;
      const later = exchange("GET", "/api/list", { "X-API-Key": "hot" });
      expect(fast(later.req, later.res), `meta: ${meta}`).toBe(!meta);
      if (meta) continue;
      expect(later.written.status).toBe(200);
      expect(later.written.body).toBe(before.written.body);
      expect(Number(later.written.headers?.["X-Data-Age"])).toBe(Number(before.written.headers?.["X-Data-Age"]) + 3);
      const viaApp = await app.request("/api/list", { headers: { "X-API-Key": "cold" } });
      expect(viaApp.headers.get("X-Data-Age")).toBe(later.written.headers?.["X-Data-Age"]);
    }
  });

  it("while the app renders a new second's body with _meta, the fast path waits for that render and answers from it", async () => {
    const renders = { count: 0, gate: undefined as Promise<void> | undefined };
    const { app, clock, fast } = service({ meta: true, renders });
    for (let i = 0; i < 2; i++) await app.request("/api/list", { headers: { "X-API-Key": "cold" } });
    clock.ms += 1000;
    let open = () => {};
    renders.gate = new Promise<void>((r) => {
      open = r;
    });
    const first = app.request("/api/list", { headers: { "X-API-Key": "cold" } });
    await new Promise((r) => setImmediate(r)); // the app's render of the new second has started
    const waiting = exchange("GET", "/api/list", { "X-API-Key": "hot" });
    const answered = fast(waiting.req, waiting.res);
    expect(answered).toBeInstanceOf(Promise);
    expect(waiting.written.status).toBeUndefined();
    open();
    await expect(answered).resolves.toBe(true);
    const viaApp = await first;
    expect(waiting.written.status).toBe(200);
    expect(waiting.written.body).toBe(await viaApp.text());
    expect(JSON.parse(waiting.written.body ?? "")._meta).toBeDefined();
    expect(renders.count).toBe(3); // two renders of the first second (the first request is not stored), one of the next
  });

  it("a key that needs the store: a promise of the same answer; an invalid one gets the lane's 401", async () => {
    const { app, fast } = service();
    for (let i = 0; i < 2; i++) await app.request("/api/list", { headers: { "X-API-Key": "cold" } });
    const cold = exchange("GET", "/api/list", { "x-api-key": "cold" });
    await expect(fast(cold.req, cold.res)).resolves.toBe(true);
    expect(cold.written.status).toBe(200);
    const bad = exchange("GET", "/api/list", { "x-api-key": "nope" });
    await expect(fast(bad.req, bad.res)).resolves.toBe(true);
    expect(bad.written.status).toBe(401);
  });

  it("leaves to the app (nothing written): other methods, conditional requests, unknown URLs, a header sent twice", async () => {
    const { app, fast } = service();
    for (let i = 0; i < 2; i++) await app.request("/api/list", { headers: { "X-API-Key": "cold" } });
    const cases = [
      exchange("POST", "/api/list", { "X-API-Key": "hot" }),
      exchange("GET", "/api/list", { "X-API-Key": "hot", "If-None-Match": '"x"' }),
      exchange("GET", "/api/list?x=1", { "X-API-Key": "hot" }),
    ];
    const twice = exchange("GET", "/api/list", {});
    (twice.req as { rawHeaders: string[] }).rawHeaders = ["X-API-Key", "hot", "x-api-key", "cold"];
    for (const c of [...cases, twice]) {
      expect(fast(c.req, c.res)).toBe(false);
      expect(c.written.status).toBeUndefined();
    }
  });
});

describe("withFastPath (the listener)", () => {
  it("hands the app every request the fast path did not answer, now or once its promise settles", async () => {
    const slow: string[] = [];
    const answers: Record<string, boolean | Promise<boolean>> = {
      "/sync-yes": true,
      "/sync-no": false,
      "/later-yes": Promise.resolve(true),
      "/later-no": Promise.resolve(false),
      "/later-fails": Promise.reject(new Error("x")),
    };
    const listener = withFastPath(
      (req) => answers[req.url ?? ""],
      (req) => slow.push(req.url ?? ""),
    );
    for (const url of Object.keys(answers)) {
      const { req, res } = exchange("GET", url, {});
      listener(req, res);
    }
    await new Promise((r) => setImmediate(r));
    expect(slow.sort()).toEqual(["/later-fails", "/later-no", "/sync-no"]);
  });
});
