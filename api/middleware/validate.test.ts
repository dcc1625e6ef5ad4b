import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { PublishedStore, ServingBuild } from "../lib/published.ts";
import type { StaticRoute } from "../routes/route.ts";
import { installErrorHandlers } from "./errors.ts";
import { Cors } from "./cors.ts";
import { type RequestInput, validate } from "./validate.ts";

describe("the validate step", () => {
  const route = {
    kind: "static",
    operationId: "getFile",
    method: "GET",
    path: "/files/:name",
    lane: "public",
    params: z.object({ name: z.string().regex(/^[a-z]+$/, "lowercase letters") }),
    query: z.object({ v: z.coerce.number().int().optional() }),
  } as unknown as StaticRoute;

  /** An app with the validate step before a handler that reports the request input; counts build lookups. */
  function appWith(build: ServingBuild | null) {
    let lookups = 0;
    let reached: RequestInput | undefined;
    const store = {
      build: async () => {
        lookups++;
        return build;
      },
    } as unknown as PublishedStore;
    const app = new Hono();
    installErrorHandlers(app, new Cors([]));
    app.get(
      route.path,
      validate(route, { store, clockMode: "wall", nowMs: () => 1_700_000_000_500, services: {} }),
      (c) => {
        reached = c.get("input");
        return c.text("ok");
      },
    );
    return { app, seen: () => ({ lookups, reached }) };
  }

  it("resolves the build and the service second once and leaves the validated handler context for the next steps", async () => {
    const build = { id: "b1", manifest: { clock: "wall" } } as unknown as ServingBuild;
    const { app, seen } = appWith(build);
    expect((await app.request("/files/abc?v=3")).status).toBe(200);
    const { lookups, reached } = seen();
    expect(lookups).toBe(1);
    expect(reached?.build).toBe(build);
    expect(reached?.clock).toEqual({ now: 1_700_000_000, clock: "wall", wallNow: 1_700_000_000 });
    expect(reached?.raw.key).toBe("getFile/abc&v=3");
    expect(reached?.ctx).toMatchObject({ params: { name: "abc" }, query: { v: 3 }, now: 1_700_000_000, build });
  });

  it("a bad or unknown parameter is a 400 naming it, and the next step never runs", async () => {
    const { app, seen } = appWith(null);
    const bad = await app.request("/files/ABC");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: "Invalid parameter name: lowercase letters" });
    const unknown = await app.request("/files/abc?w=1");
    expect(await unknown.json()).toEqual({ error: "Invalid parameter w: unknown parameter" });
    expect(seen().reached).toBeUndefined();
  });
});
