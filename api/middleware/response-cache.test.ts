import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { HttpError } from "../lib/http-error.ts";
import type { PublishedStore, ServingBuild } from "../lib/published.ts";
import type { CachedResponse } from "../lib/response-cache.ts";
import type { JsonRoute } from "../routes/route.ts";
import { Cors } from "./cors.ts";
import { installErrorHandlers } from "./errors.ts";
import { render } from "./json-route.ts";
import { entryState, RouteResponses } from "./response-cache.ts";
import { validate } from "./validate.ts";

/** validate → responseCache → handler for `route` on a wall clock the test moves (`clock.ms`). */
function chain(route: JsonRoute) {
  const clock = { ms: 1_700_000_000_000 };
  const build = { id: "b1", manifest: { clock: "wall" }, file: async () => null } as unknown as ServingBuild;
  const store = { build: async () => build, current: () => build } as unknown as PublishedStore;
  const deps = { store, clockMode: "wall" as const, nowMs: () => clock.ms, services: {} };
  const responses = new RouteResponses({ ...deps, cors: new Cors(["https://a.example"]) });
  const app = new Hono();
  installErrorHandlers(app, new Cors(["https://a.example"]));
  app.on(route.method, route.path, validate(route, deps), responses.responseCache(route), render(route));
  return { app, responses, clock };
}

const counted = (meta: boolean, gate?: Promise<void>) => {
  const calls = { n: 0 };
  const route: JsonRoute = {
    kind: "json",
    operationId: "getZ",
    method: "GET",
    path: "/api/z",
    lane: "apiKey",
    tag: "t",
    cache: "standard",
    meta,
    maxAgeSec: 600,
    summary: "z",
    handler: async (ctx) => {
      calls.n++;
      await gate;
      return { payload: { render: calls.n }, dataAsOf: ctx.now - 10 };
    },
  };
  return { route, calls };
};

describe("the responseCache step", () => {
  it("stores an answer from its key's second request and serves it after; another second re-renders a body with _meta", async () => {
    const { route, calls } = counted(true);
    const { app, clock } = chain(route);
    const bodies = [];
    for (let i = 0; i < 4; i++) bodies.push(await (await app.request("/api/z")).json());
    expect(calls.n).toBe(2);
    expect(bodies.map((b) => b.render)).toEqual([1, 2, 2, 2]);
    clock.ms += 1000;
    expect((await (await app.request("/api/z")).json()).render).toBe(3);
  });

  it("a body without _meta is kept across seconds: only its data-age header moves", async () => {
    const { route, calls } = counted(false);
    const { app, clock } = chain(route);
    await app.request("/api/z");
    await app.request("/api/z");
    clock.ms += 5000;
    const later = await app.request("/api/z");
    expect(calls.n).toBe(2);
    expect(await later.json()).toEqual({ render: 2 });
    expect(later.headers.get("X-Data-Age")).toBe("15");
  });

  it("requests that arrive while a key renders wait for that render, not another; all get its bytes", async () => {
    let open = () => {};
    const { route, calls } = counted(true, new Promise<void>((r) => (open = r)));
    const { app } = chain(route);
    const answers = Array.from({ length: 6 }, () => app.request("/api/z"));
    open();
    const texts = await Promise.all((await Promise.all(answers)).map((r) => r.text()));
    expect(calls.n).toBe(1);
    expect(new Set(texts).size).toBe(1);
  });

  it("a handler's error is the answer (its status and { error }), never cached", async () => {
    const { route } = counted(false);
    let fail = true;
    const failing: JsonRoute = {
      ...route,
      handler: async (ctx) => {
        if (fail) throw new HttpError(404, "Not found");
        return { payload: { ok: true }, dataAsOf: ctx.now };
      },
    };
    const { app } = chain(failing);
    for (let i = 0; i < 2; i++) {
      const r = await app.request("/api/z");
      expect(r.status).toBe(404);
      expect(await r.json()).toEqual({ error: "Not found" });
    }
    fail = false;
    expect((await app.request("/api/z")).status).toBe(200);
  });

  it("the fast path finds a keyed GET's URL once the app answered it from the cache, only while it is current", async () => {
    const { route } = counted(true);
    const { app, responses, clock } = chain(route);
    for (let i = 0; i < 2; i++) await app.request("/api/z");
    expect(responses.nodeHit("/api/other", undefined)).toBeUndefined();
    const hit = responses.nodeHit("/api/z", undefined);
    expect(hit?.route).toBe(route);
    expect(hit?.coding).toBe("identity");
    expect(JSON.parse(Buffer.from(hit?.body ?? []).toString("utf8")).render).toBe(2);
    clock.ms += 1000;
    expect(responses.nodeHit("/api/z", undefined)).toBeUndefined();
  });
});

describe("entryState (one validity rule for the app and the fast path)", () => {
  const e = (timeDependent: boolean) =>
    ({ buildId: "b", nowSec: 10, timeDependent, headers: {}, bodies: {} }) as unknown as CachedResponse;
  it("current for its build and second; a later second refreshes headers unless the body has _meta; another build renders", () => {
    expect(entryState(e(true), "b", 10)).toBe("current");
    expect(entryState(e(false), "b", 11)).toBe("refresh");
    expect(entryState(e(true), "b", 11)).toBe("render");
    expect(entryState(e(false), "c", 10)).toBe("render");
    expect(entryState(e(false), null, 10)).toBe("render");
  });
});
