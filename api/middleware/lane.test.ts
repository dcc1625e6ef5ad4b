import { Hono } from "hono";
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { HttpError } from "../lib/http-error.ts";
import type { AuthRequest, Lane, LaneAuth } from "../lib/auth.ts";
import { TRUST_NONE } from "../lib/client-address.ts";
import type { JsonRoute, StaticRoute, WriteRoute } from "../routes/route.ts";
import { admitNodeRequest, admitRoute, cacheableGet, lane, routeLane } from "./lane.ts";

describe("the lane of a request (one decision for the app and the fast path)", () => {
  const headers = (h: Record<string, string>) => (n: string) => h[n];

  it("a keyed GET with the site secret header is judged on the site lane; anything else on its declared lane", () => {
    expect(routeLane({ lane: "apiKey", method: "GET" }, headers({ "X-Ballast-Site-Proxy-Secret": "s" }))).toBe("site");
    expect(routeLane({ lane: "apiKey", method: "GET" }, headers({ "X-API-Key": "k" }))).toBe("apiKey");
    expect(routeLane({ lane: "apiKey", method: "POST" }, headers({ "X-Ballast-Site-Proxy-Secret": "s" }))).toBe(
      "apiKey",
    );
    expect(routeLane({ lane: "public", method: "GET" }, headers({ "X-Ballast-Site-Proxy-Secret": "s" }))).toBe(
      "public",
    );
    expect(routeLane({ lane: "admin", method: "GET" }, headers({ "X-Ballast-Site-Proxy-Secret": "s" }))).toBe("admin");
  });

  it("admitRoute asks LaneAuth about that lane and passes its refusal on", async () => {
    const asked: Lane[] = [];
    const auth = {
      admit: async (lane: Lane) => {
        asked.push(lane);
        if (lane === "site") throw new HttpError(401, "Unauthorized");
      },
    } as unknown as LaneAuth;
    const req = (h: Record<string, string>): AuthRequest => ({
      header: headers(h),
      ip: "203.0.113.1",
      cacheableGet: true,
    });
    await admitRoute(auth, { lane: "apiKey", method: "GET" }, req({ "X-API-Key": "k" }));
    await expect(
      admitRoute(auth, { lane: "apiKey", method: "GET" }, req({ "X-Ballast-Site-Proxy-Secret": "bad" })),
    ).rejects.toMatchObject({ status: 401 });
    expect(asked).toEqual(["apiKey", "site"]);
  });
});

describe("the lane step (hono middleware) and its Node adapter", () => {
  type Seen = { lane: Lane; cacheableGet: boolean; ip: string };
  /** A LaneAuth that records what it was asked and refuses requests without `X-API-Key` on the key lane. */
  const recordingAuth = (seen: Seen[], inMemory: string[] = []) =>
    ({
      admit: async (lane: Lane, req: AuthRequest) => {
        seen.push({ lane, cacheableGet: req.cacheableGet, ip: req.ip });
        if (lane === "apiKey" && !req.header("X-API-Key")) throw new HttpError(401, "Unauthorized");
      },
      admitCachedKey: (token: string | undefined) => token !== undefined && inMemory.includes(token),
    }) as unknown as LaneAuth;
  const json: JsonRoute = {
    kind: "json",
    operationId: "getY",
    method: "GET",
    path: "/api/y",
    lane: "apiKey",
    tag: "t",
    cache: "standard",
    meta: false,
    summary: "y",
  };

  it("admits before the next step runs; a refusal is the answer and the next step never runs", async () => {
    const seen: Seen[] = [];
    let reached = 0;
    const app = new Hono();
    app.onError((err, c) => c.json({ error: err.message }, (err as HttpError).status as 401));
    app.get("/api/y", lane(json, recordingAuth(seen)), (c) => {
      reached++;
      return c.text("ok");
    });
    expect((await app.request("/api/y")).status).toBe(401);
    expect(reached).toBe(0);
    const ok = await app.request("/api/y", { headers: { "X-API-Key": "k" } });
    expect(await ok.text()).toBe("ok");
    expect(reached).toBe(1);
    expect(seen.map((s) => [s.lane, s.cacheableGet])).toEqual([
      ["apiKey", true],
      ["apiKey", true],
    ]);
  });

  it("cacheable GETs: JSON GETs unless marked otherwise or not yet available, every static file, never a write", () => {
    expect(cacheableGet(json)).toBe(true);
    expect(cacheableGet({ ...json, cacheable: false })).toBe(false);
    expect(cacheableGet({ ...json, notYetAvailable: "x" })).toBe(false);
    expect(cacheableGet({ ...json, method: "POST" })).toBe(false);
    expect(cacheableGet({ kind: "static" } as StaticRoute)).toBe(true);
    expect(cacheableGet({ kind: "write" } as WriteRoute)).toBe(false);
  });

  it("the Node adapter decides without I/O for a key held in memory, else asks the same lane check (site secret: site lane)", async () => {
    const seen: Seen[] = [];
    const auth = recordingAuth(seen, ["hot"]);
    const req = (headers: Record<string, string>) =>
      ({ headers, socket: { remoteAddress: "192.0.2.5" } }) as unknown as IncomingMessage;
    expect(admitNodeRequest(auth, json, { apiKey: "hot" }, req({ "x-api-key": "hot" }), TRUST_NONE)).toBe(true);
    expect(seen).toEqual([]);
    const cold = admitNodeRequest(auth, json, { apiKey: "cold" }, req({ "x-api-key": "cold" }), TRUST_NONE);
    await expect(cold).resolves.toBeUndefined();
    // the site secret puts a keyed GET on the site lane even for a key held in memory
    const site = admitNodeRequest(
      auth,
      json,
      { apiKey: "hot", siteProxySecret: "s" },
      req({ "x-api-key": "hot", "x-ballast-site-proxy-secret": "s" }),
      TRUST_NONE,
    );
    await expect(site).resolves.toBeUndefined();
    await expect(admitNodeRequest(auth, json, {}, req({}), TRUST_NONE)).rejects.toMatchObject({ status: 401 });
    expect(seen).toEqual([
      { lane: "apiKey", cacheableGet: true, ip: "192.0.2.5" },
      { lane: "site", cacheableGet: true, ip: "192.0.2.5" },
      { lane: "apiKey", cacheableGet: true, ip: "192.0.2.5" },
    ]);
  });
});
