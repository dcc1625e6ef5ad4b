import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { Cors } from "./cors.ts";
import { installErrorHandlers } from "./errors.ts";
import { siteDataProxy } from "./site-proxy.ts";

describe("same-origin proxy /_site-data/* (spec 1, 5.7)", () => {
  /** An app whose `/api/*` echoes what the proxy sent, with cache headers to forward. */
  function app(secret: string | undefined) {
    const a = new Hono();
    installErrorHandlers(a, new Cors(["https://site.example"]));
    a.all("/_site-data/*", siteDataProxy({ origins: ["https://site.example"], secret, fetch: (req) => a.fetch(req) }));
    a.get("/api/*", (c) =>
      c.json(
        {
          path: c.req.path,
          query: c.req.query(),
          secret: c.req.header("X-Ballast-Site-Proxy-Secret") ?? null,
          key: c.req.header("X-API-Key") ?? null,
          etag: c.req.header("If-None-Match") ?? null,
        },
        200,
        {
          "Cache-Control": "public, s-maxage=300, max-age=60",
          Age: "17",
          Date: "Wed, 25 Nov 2026 20:00:00 GMT",
          ETag: '"abc"',
        },
      ),
    );
    return a;
  }

  it("maps /_site-data/<x>?q to /api/<x>?q with the secret, forwards only the caching request headers, and returns the answer unchanged", async () => {
    const r = await app("s3cret-0123456789").request("/_site-data/chains?chain=ethereum", {
      headers: { Origin: "https://site.example", "X-API-Key": "bl_live_x", "If-None-Match": '"abc"' },
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      path: "/api/chains",
      query: { chain: "ethereum" },
      secret: "s3cret-0123456789",
      key: null,
      etag: '"abc"',
    });
    expect([
      r.headers.get("cache-control"),
      r.headers.get("age"),
      r.headers.get("date"),
      r.headers.get("etag"),
    ]).toEqual(["public, s-maxage=300, max-age=60", "17", "Wed, 25 Nov 2026 20:00:00 GMT", '"abc"']);
  });

  it("Origin decides, else Referer; other sites, no page, or no configured secret: 404; other methods: 405 Allow: GET", async () => {
    const a = app("s3cret-0123456789");
    expect((await a.request("/_site-data/x", { headers: { Referer: "https://site.example/page" } })).status).toBe(200);
    expect(
      (
        await a.request("/_site-data/x", {
          headers: { Origin: "https://evil.example", Referer: "https://site.example/page" },
        })
      ).status,
    ).toBe(404);
    expect(
      (await a.request("/_site-data/x", { headers: { Origin: "null", Referer: "https://evil.example/" } })).status,
    ).toBe(404);
    expect((await a.request("/_site-data/x")).status).toBe(404);
    expect(
      (await app(undefined).request("/_site-data/x", { headers: { Origin: "https://site.example" } })).status,
    ).toBe(404);
    const post = await a.request("/_site-data/x", { method: "POST", headers: { Origin: "https://site.example" } });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET"]);
  });
});
