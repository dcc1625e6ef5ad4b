import { Hono } from "hono";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { TRUST_NONE } from "../lib/client-address.ts";
import { compressBody } from "../lib/encoding.ts";
import type { PublishedStore } from "../lib/published.ts";
import type { StaticRoute, WriteRoute } from "../routes/route.ts";
import { Cors } from "./cors.ts";
import { installErrorHandlers } from "./errors.ts";
import { serveStatic, serveWrite } from "./route-handlers.ts";

const store = { build: async () => null } as unknown as PublishedStore;

describe("the static file handler step", () => {
  const bytes = Buffer.from("x".repeat(4096));
  const route = {
    handler: async (ctx: { params: Record<string, string> }) =>
      ctx.params.name === "big"
        ? { bytes, contentType: "text/csv", encoded: async (c: "br" | "gzip") => compressBody(bytes, c) }
        : null,
  } as unknown as StaticRoute;
  const app = new Hono();
  installErrorHandlers(app, new Cors([]));
  app.get(
    "/files/:name",
    async (c, next) => {
      c.set("input", { ctx: { params: c.req.param() } } as never);
      await next();
    },
    serveStatic(route),
  );

  it("serves the file to any origin, 5 min by default, gzip when asked; 404 when the handler finds nothing", async () => {
    const r = await app.request("/files/big", { headers: { "Accept-Encoding": "gzip" } });
    expect(r.status).toBe(200);
    expect(Object.fromEntries(r.headers)).toMatchObject({
      "access-control-allow-origin": "*",
      "cache-control": "public, max-age=300",
      "content-encoding": "gzip",
      "content-type": "text/csv",
      vary: "Accept-Encoding",
    });
    expect(gunzipSync(Buffer.from(await r.arrayBuffer())).equals(bytes)).toBe(true);
    const missing = await app.request("/files/none");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "Not found" });
  });
});

describe("the write handler step", () => {
  it("answers the handler's status with text or JSON, CORS and always no-store; the handler sees the site lane", async () => {
    const seen: boolean[] = [];
    const route = {
      handler: async (ctx: { viaSiteLane: boolean; readBody(max: number): Promise<Uint8Array> }) => {
        seen.push(ctx.viaSiteLane);
        const body = Buffer.from(await ctx.readBody(100)).toString("utf8");
        return body === "text"
          ? { status: 201, text: "made", headers: { "Cache-Control": "public" } }
          : { status: 202 };
      },
    } as unknown as WriteRoute;
    const cors = new Cors(["https://a.example"]);
    const app = new Hono();
    installErrorHandlers(app, cors);
    app.post(
      "/api/w",
      serveWrite(route, { store, clockMode: "wall", nowMs: Date.now, services: {}, cors, trust: TRUST_NONE }),
    );
    const text = await app.request("/api/w", { method: "POST", body: "text" });
    expect(text.status).toBe(201);
    expect(await text.text()).toBe("made");
    expect(Object.fromEntries(text.headers)).toMatchObject({
      "cache-control": "no-store",
      "content-type": "text/plain; charset=utf-8",
      "access-control-allow-origin": "https://a.example",
    });
    const json = await app.request("/api/w", {
      method: "POST",
      body: "{}",
      headers: { "X-Ballast-Site-Proxy-Secret": "s" },
    });
    expect(json.status).toBe(202);
    expect(await json.json()).toEqual({});
    expect(json.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(seen).toEqual([false, true]);
  });
});
