import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AuthRequest, LaneAuth } from "../lib/auth.ts";
import { TRUST_NONE } from "../lib/client-address.ts";
import { HttpError } from "../lib/http-error.ts";
import type { RouteDecl } from "../routes/route.ts";
import { Cors } from "./cors.ts";
import { installErrorHandlers } from "./errors.ts";
import { mountFallbacks } from "./fallbacks.ts";

describe("fallbacks after the route table", () => {
  const routes = [
    { path: "/api/things", method: "GET", lane: "apiKey" },
    { path: "/api/things", method: "POST", lane: "public" },
    { path: "/api/ops-thing", method: "POST", lane: "admin" },
  ] as RouteDecl[];
  const asked: string[] = [];
  const auth = {
    admit: async (lane: string, req: AuthRequest) => {
      asked.push(lane);
      if (!req.header("X-API-Key")) throw new HttpError(401, "Unauthorized");
    },
  } as unknown as LaneAuth;
  const app = new Hono();
  installErrorHandlers(app, new Cors([]));
  mountFallbacks(app, { routes, adminFamilies: ["/api/api-keys", "/api/backfill-"], auth, trust: TRUST_NONE });
  const status = async (method: string, path: string, key?: string) => {
    const r = await app.request(path, { method, headers: key ? { "X-API-Key": key } : {} });
    return [r.status, r.headers.get("Allow")];
  };

  it("a declared path with another method: 405 with Allow from the table", async () => {
    expect(await status("DELETE", "/api/things")).toEqual([405, "GET, POST"]);
  });

  it("admin families and operator paths are 404 before any key check; unknown share images 404 without a key", async () => {
    asked.length = 0;
    expect(await status("GET", "/api/api-keys/k1")).toEqual([404, null]);
    expect(await status("GET", "/api/backfill-depegs")).toEqual([404, null]);
    expect(await status("POST", "/api/ops-thing")).toEqual([404, null]);
    expect(await status("GET", "/api/og/missing.png")).toEqual([404, null]);
    expect(asked).toEqual([]);
  });

  it("other API paths: POST 405 Allow GET, other methods 405 Allow GET, POST; GET the key lane first, then 404", async () => {
    expect(await status("POST", "/api/nothing")).toEqual([405, "GET"]);
    expect(await status("PUT", "/api/nothing")).toEqual([405, "GET, POST"]);
    expect(await status("GET", "/api/nothing")).toEqual([401, null]);
    expect(await status("GET", "/api/nothing", "k")).toEqual([404, null]);
  });
});
