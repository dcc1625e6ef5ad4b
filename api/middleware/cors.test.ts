import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { Cors, CORS_EXPOSE_HEADERS } from "./cors.ts";
import { installErrorHandlers } from "./errors.ts";

describe("Cors (spec 1 rule 2)", () => {
  const cors = new Cors(["https://a.example", "https://b.example"]);

  it("echoes an allowlisted Origin, omits a foreign one, and falls back to the first without Origin", () => {
    expect(cors.headers("https://b.example")).toEqual({
      "Access-Control-Allow-Origin": "https://b.example",
      Vary: "Origin, Accept-Encoding",
      "Access-Control-Expose-Headers": CORS_EXPOSE_HEADERS,
    });
    expect(cors.headers("https://evil.example")["Access-Control-Allow-Origin"]).toBeUndefined();
    expect(cors.headers(undefined)["Access-Control-Allow-Origin"]).toBe("https://a.example");
    expect(cors.headers("https://b.example")).toBe(cors.headers("https://b.example")); // decided once per Origin
  });

  it("preflight: 204 for an allowlisted or absent Origin, 403 for a foreign one on the API; any origin on static files", async () => {
    const app = new Hono();
    installErrorHandlers(app, cors);
    app.options("*", cors.preflight());
    const pre = (path: string, origin?: string) =>
      app.request(path, { method: "OPTIONS", headers: origin ? { Origin: origin } : {} });
    const ok = await pre("/api/stablecoins", "https://a.example");
    expect([
      ok.status,
      ok.headers.get("access-control-allow-origin"),
      ok.headers.get("access-control-allow-headers"),
    ]).toEqual([204, "https://a.example", "Content-Type, Idempotency-Key, X-API-Key"]);
    const foreign = await pre("/api/stablecoins", "https://evil.example");
    // refused without a body or content type (spec 1 rule 1: CORS preflights have none)
    expect([foreign.status, foreign.headers.get("content-type"), await foreign.text()]).toEqual([403, null, ""]);
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
    expect((await pre("/api/stablecoins")).status).toBe(204);
    const file = await pre("/datasets/x.csv", "https://evil.example");
    expect([file.status, file.headers.get("access-control-allow-origin")]).toEqual([204, "*"]);
  });
});
