import { type Context, Hono } from "hono";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { PublishedStore } from "../lib/published.ts";
import type { JsonRoute } from "../routes/route.ts";
import { bodyReader, freshness, refreshedHeaders, requestKey, respond, validatedContext } from "./json-route.ts";

const route: JsonRoute = {
  kind: "json",
  operationId: "getX",
  method: "GET",
  path: "/x/:id",
  lane: "apiKey",
  tag: "t",
  cache: "standard",
  meta: true,
  maxAgeSec: 600,
  summary: "x",
  params: z.object({ id: z.string().regex(/^[a-z]+$/, "must be lowercase letters") }),
  query: z.object({ days: z.coerce.number().int().min(1, "must be at least 1").optional(), q: z.string().optional() }),
  handler: async (ctx) => ({ payload: { id: ctx.params.id, days: ctx.query.days ?? null }, dataAsOf: ctx.now - 30 }),
};
const base = { store: {} as PublishedStore, services: {} };
const clock = { now: 1_000_000, clock: "wall" as const, wallNow: 1_000_000 };

/** Runs `fn` on the Hono context of a request to `path` and returns what it returned (or the error's status and message). */
async function onContext<T>(path: string, fn: (c: Context) => T | Promise<T>, init?: RequestInit) {
  const app = new Hono();
  let out: { value?: T; error?: { status: number; message: string } } = {};
  app.all("/x/:id", async (c) => {
    try {
      out = { value: await fn(c) };
    } catch (e) {
      out = { error: { status: (e as { status: number }).status, message: (e as Error).message } };
    }
    return c.body(null, 204);
  });
  await app.request(path, init);
  return out;
}

describe("a JSON route's request", () => {
  it("the cache key orders query parameters by name, so equivalent URLs share one entry", async () => {
    const a = await onContext("/x/abc?q=1&days=7", (c) => requestKey(c, route).key);
    const b = await onContext("/x/abc?days=7&q=1", (c) => requestKey(c, route).key);
    expect(a.value).toBe("getX/abc&days=7&q=1");
    expect(b.value).toBe(a.value);
  });

  it("validation: a 400 names the bad path or query parameter, and an unknown one", async () => {
    const v = (path: string) =>
      onContext(path, (c) => validatedContext(route, requestKey(c, route), null, clock, base).query);
    expect((await v("/x/abc?days=7")).value).toEqual({ days: 7 });
    expect((await v("/x/ABC")).error).toEqual({
      status: 400,
      message: "Invalid parameter id: must be lowercase letters",
    });
    expect((await v("/x/abc?days=0")).error).toEqual({
      status: 400,
      message: "Invalid parameter days: must be at least 1",
    });
    expect((await v("/x/abc?limit=5")).error).toEqual({
      status: 400,
      message: "Invalid parameter limit: unknown parameter",
    });
  });

  it("the body reader answers 413 with the caller's extra fields past the cap, by Content-Length or by the bytes", async () => {
    const read = (body: string) =>
      onContext("/x/abc", async (c) => (await bodyReader(c)(8, { reason: "body_invalid" })).byteLength, {
        method: "POST",
        body,
      });
    expect((await read("12345678")).value).toBe(8);
    expect((await read("123456789")).error).toEqual({ status: 413, message: "Request body larger than 8 bytes" });
  });
});

describe("a JSON route's answer", () => {
  it("merges _meta with the freshness of the data into an object body and sets the route's cache headers", async () => {
    const entry = await respond(route, {
      ...base,
      build: null,
      now: clock.now,
      clock: "wall",
      wallNow: clock.wallNow,
      params: { id: "abc" },
      query: {},
    });
    const body = JSON.parse(Buffer.from(entry.bodies.identity).toString("utf8"));
    expect(body).toMatchObject({ id: "abc", days: null, _meta: expect.any(Object) });
    expect(entry.headers["Cache-Control"]).toBe("public, s-maxage=300, max-age=60");
    expect(entry.headers["X-Data-Age"]).toBe("30");
    expect(entry.timeDependent).toBe(true);
  });

  it("freshness past 8x the budget turns the answer no-store with Warning 110; a route without a budget just gets its profile", () => {
    const old = freshness(route, clock.now, clock.now - 600 * 9, "standard");
    expect(old.status).toBe("degraded");
    expect(old.headers["Cache-Control"]).toBe("no-store");
    expect((old.headers as Record<string, string>).Warning).toMatch(/^110/);
    expect(freshness({ ...route, maxAgeSec: undefined }, clock.now, null, "archive")).toEqual({
      status: null,
      f: null,
      headers: { "Cache-Control": "public, s-maxage=86400, max-age=3600" },
    });
  });

  it("when only the second moves, the refreshed headers carry the new data age and keep the ETag (a conditional request a second later is still 304)", async () => {
    const tagged: JsonRoute = {
      ...route,
      meta: false,
      handler: async (ctx) => ({ payload: { ok: true }, dataAsOf: ctx.now - 30, etag: "abc" }),
    };
    const entry = await respond(tagged, {
      ...base,
      build: null,
      now: clock.now,
      clock: "wall",
      wallNow: clock.wallNow,
      params: { id: "abc" },
      query: {},
    });
    expect(entry.headers.ETag).toBe('"abc"');
    const later = refreshedHeaders(tagged, entry, clock.now + 1);
    expect(later.ETag).toBe('"abc"');
    expect(later["X-Data-Age"]).toBe("31");
  });
});
