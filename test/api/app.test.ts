import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestSchema } from "../helpers/pg-schema.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { StatusHistoryStore } from "../../api/lib/status-history.ts";
import { ROUTES } from "../../api/routes/index.ts";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { buildRecorded, RECORDED_AS_OF } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";
import type { z } from "zod";
import type { ChainsPayloadSchema } from "../../site-data/chains.ts";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: SqlClient;
let keys: KeyStore;
let app: ReturnType<typeof createApp>;
let token: string;
let dir: string;
let clockMs = 0;

beforeAll(async () => {
  ({ dir } = await buildRecorded());
  schema = await createTestSchema("ballast_test");
  sql = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  keys = new KeyStore(sql, "pepper-for-tests-0123456789");
  await keys.init();
  token = (await keys.create({ name: "t" })).token;
  clockMs = Date.now();
  app = createApp({
    store: new PublishedStore(fsReader(dir), 0, () => clockMs),
    keys,
    limiter: new KeyRateLimiter(),
    corsOrigins: ["https://ballast.example"],
    clockMode: "auto",
    nowMs: () => clockMs,
    services: { statusHistory: { store: new StatusHistoryStore(sql) } }, // nothing recorded: an empty history (test/api/status-history.test.ts records)
  });
});
afterAll(async () => {
  await sql?.close();
  await schema?.drop();
});

const req = (path: string, init: RequestInit & { key?: string | null } = {}) => {
  const headers = new Headers(init.headers);
  if (init.key !== null) headers.set("X-API-Key", init.key ?? token);
  return app.request(path, { ...init, headers });
};

describe("key store on a real Postgres", () => {
  it("stores only prefix and keyed hash; verifies; rejects tampered, inactive and expired keys", async () => {
    const { rows } = await sql.query<{ key_prefix: string; secret_hash: string }>(
      "select key_prefix, secret_hash from api_keys",
    );
    expect(rows[0].secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(token).toMatch(/^bl_live_[0-9a-f]{16}_[A-Za-z0-9_-]{32}$/);
    expect(token).not.toContain(rows[0].secret_hash);
    expect(await keys.verify(token, 0)).toMatchObject({ rateLimitPerMinute: 120, isActive: true });
    expect(await keys.verify(`${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`, 0)).toBeNull();
    const other = await keys.create({ name: "x", expiresAt: 100 });
    expect(await keys.verify(other.token, 99)).not.toBeNull();
    expect(await keys.verify(other.token, 100)).toBeNull();
    await keys.deactivate(other.record.id);
    expect(await keys.verify(other.token, 0)).toBeNull();
  });
});

describe("auth matrix and errors", () => {
  it("401 without or with a malformed key; health exempt", async () => {
    for (const key of [null, "nope", "bl_live_zzzz_short"]) {
      const r = await req("/api/stablecoins", { key });
      expect(r.status).toBe(401);
      expect((await r.json()).error).toMatch(/X-API-Key/);
    }
    expect((await req("/api/health", { key: null })).status).toBe(200);
  });

  it("unknown paths: 401 without a key, 404 with one; unknown ids 404", async () => {
    expect((await req("/api/api-key-requests", { key: null })).status).toBe(401);
    expect((await req("/api/api-key-requests")).status).toBe(404);
    expect((await req("/api/stablecoin/usdt")).status).toBe(404);
    expect((await req("/api/stablecoin-summary/USDT-tether")).status).toBe(404);
    expect((await req("/api/chains?chain=atlantis")).status).toBe(404);
  });

  it("400 naming the parameter", async () => {
    const cases: [string, string][] = [
      ["/api/supply-history", "stablecoin"],
      ["/api/supply-history?stablecoin=usdt-tether&days=abc", "days"],
      ["/api/supply-history?stablecoin=usdt-tether&days=0", "days"],
      ["/api/non-usd-share?days=5", "days"],
      ["/api/chains?bogus=1", "bogus"],
    ];
    for (const [path, param] of cases) {
      const r = await req(path);
      expect(r.status, path).toBe(400);
      expect((await r.json()).error).toContain(param);
    }
  });

  it("405 rules: a declared path allows its declared methods; unknown POST → Allow: GET; other verbs → Allow: GET, POST", async () => {
    const p = await req("/api/stablecoins", { method: "POST" });
    expect(p.status).toBe(405);
    expect(p.headers.get("allow")).toBe("GET");
    const d = await req("/api/stablecoins", { method: "DELETE" });
    expect(d.status).toBe(405);
    expect(d.headers.get("allow")).toBe("GET");
    const claim = await req("/api/donor-key-claims", { method: "GET", key: null });
    expect(claim.status).toBe(405);
    expect(claim.headers.get("allow")).toBe("POST");
    const unknownPost = await req("/api/no-such-route", { method: "POST", key: null });
    expect([unknownPost.status, unknownPost.headers.get("allow")]).toEqual([405, "GET"]);
    const unknownPut = await req("/api/no-such-route", { method: "PUT", key: null });
    expect([unknownPut.status, unknownPut.headers.get("allow")]).toEqual([405, "GET, POST"]);
  });

  it("exempt routes answer without a key; admin families are 404 before key auth", async () => {
    for (const path of ["/api/safety-grades", "/api/dependency-graph/v1", "/api/dependency-scenarios/v1"])
      expect((await req(path, { key: null })).status, path).toBe(200);
    // Share images are published by the build (test/e2e/og-images.test.ts checks them in full).
    const og = await req("/api/og/depeg", { key: null });
    expect([og.status, og.headers.get("content-type")]).toEqual([200, "image/png"]);
    expect((await req("/api/og/stablecoin/not-a-coin", { key: null })).status).toBe(404);
    expect((await req("/api/og/no-such-image", { key: null })).status).toBe(404);
    for (const path of [
      "/api/debug-sync-state",
      "/api/api-keys",
      "/api/api-keys/abc/rotate",
      "/api/backfill-depegs",
      "/api/admin/anything",
      "/api/discovery-candidates",
    ]) {
      expect((await req(path, { key: null })).status, path).toBe(404);
      expect((await req(path)).status, path).toBe(404);
      expect((await req(path, { method: "POST" })).status, path).toBe(404);
    }
    // A keyed route of the contract whose data is not built yet: 401 without a key, 503 with one.
    expect((await req("/api/usds-status", { key: null })).status).toBe(401);
    expect((await req("/api/usds-status")).status).toBe(503);
    // its parameters are checked before the 503 (issue 18 item 8): a bad value is 400 naming it
    const bad = await req("/api/digest-snapshot?date=2023-02-30");
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/^Invalid parameter date: /);
    expect((await req("/api/digest-snapshot")).status).toBe(400);
    const noDigest = await req("/api/digest-snapshot?date=2023-03-11");
    expect([noDigest.status, (await noDigest.json()).error]).toEqual([404, "No digest found for this date"]);
    expect((await req("/api/public-status-history?window=1y")).status).toBe(400);
    expect((await req("/api/public-status-history?limit=201")).status).toBe(400);
    expect((await req("/api/public-status-history?limit=200&window=7d")).status).toBe(200); // built since issue 18 item 3
  });

  it("a request racing the store's first read waits for it instead of answering 'no published build'", async () => {
    const read = fsReader(dir);
    const slow = new PublishedStore(async (key) => {
      await new Promise((r) => setTimeout(r, 50));
      return read(key);
    });
    const first = slow.build(); // e.g. the status recorder's observation at server start
    const racing = await slow.build(); // a request arriving while that read is in flight
    expect(racing?.id).toBeTruthy();
    expect(racing?.id).toBe((await first)?.id);
  });

  it("/api/daily-digest serves the edition of the last day closed at as-of; the archive and digest-snapshot list and serve it", async () => {
    const res = await req("/api/daily-digest");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, s-maxage=300, max-age=60");
    const d = await res.json();
    expect(d).toMatchObject({
      date: "2025-09-06",
      edition: "daily",
      windowEnd: RECORDED_AS_OF,
      windowStart: RECORDED_AS_OF - 86400,
      _meta: expect.any(Object),
    });
    expect(d.headline.startsWith("2025-09-06: ")).toBe(true);
    expect(d.supply).toMatchObject({ date: "2025-09-07", previousDate: "2025-09-06", universe: "ballast-listed" });
    // an edition lists the incidents confirmed in its window; their start may be backdated before it
    for (const i of d.depegIncidents.opened) {
      expect(i.startConfirmedAt > d.windowStart && i.startConfirmedAt <= d.windowEnd, String(i.id)).toBe(true);
      expect(i.startedAt).toBeLessThanOrEqual(i.startConfirmedAt);
    }
    expect(d.supply.basis).toBe("circulating-usd-pegs-at-par");
    const stored = readFileSync(
      join(
        dir,
        "builds",
        JSON.parse(readFileSync(join(dir, "latest.json"), "utf8")).buildId,
        "site-data/daily-digest.json",
      ),
    );
    const archive = await (await req("/api/digest-archive")).json();
    expect(archive.digests.map((r: { date: string }) => r.date)).toEqual(["2025-09-06"]);
    expect(archive.digests[0].contentHash).toBe(createHash("sha256").update(stored).digest("hex"));
    const dated = await req("/api/digest-snapshot?date=2025-09-06");
    expect(Buffer.from(await dated.arrayBuffer()).equals(stored)).toBe(true);
  });

  it("/api/bluechip-ratings answers 503 not yet available while no build holds a rating capture; health lists it", async () => {
    expect((await req("/api/bluechip-ratings", { key: null })).status).toBe(401);
    const r = await req("/api/bluechip-ratings");
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("60");
    expect(await r.json()).toEqual({ error: "Data not yet available: bluechip-ratings" });
    const health = await (await req("/api/health", { key: null })).json();
    expect(
      health.warnings.find((w: string) => w.startsWith("not yet available") && w.includes("bluechip-ratings")),
    ).toContain("/api/bluechip-ratings answers 503");
    expect(health.caches["bluechip-ratings"]).toMatchObject({
      ageSeconds: null,
      healthy: false,
      sentinelValidationReason: "not-published",
    }); // listed (spec 2.8), never setting status
  });

  it("/api/dex-liquidity(-history) answer 503 not yet available: the default build (as of 2025-09-07) holds no pool capture", async () => {
    const key = (await keys.create({ name: "dex", rateLimitPerMinute: 1000 })).token;
    const req = (path: string, init: { key?: string | null } = {}) =>
      app.request(path, { headers: init.key === null ? {} : { "X-API-Key": key } });
    expect((await req("/api/dex-liquidity", { key: null })).status).toBe(401);
    const r = await req("/api/dex-liquidity");
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("60");
    expect(await r.json()).toEqual({ error: "Data not yet available: dex-liquidity" });
    const h = await req("/api/dex-liquidity-history?stablecoin=usdt-tether&days=30");
    expect(h.status).toBe(503);
    expect(await h.json()).toEqual({ error: "Data not yet available: dex-liquidity-history" });
    expect((await req("/api/dex-liquidity-history?stablecoin=nope-coin")).status).toBe(404);
    expect((await req("/api/dex-liquidity-history?stablecoin=usdt-tether&days=0")).status).toBe(400);
    expect((await req("/api/dex-liquidity-history")).status).toBe(400);
    // yield history: the same rule (it answered 200 [] for every coin before; issue 18 item 8)
    const y = await req("/api/yield-history?stablecoin=usdc-circle");
    expect(y.status).toBe(503);
    expect(await y.json()).toEqual({ error: "Data not yet available: yield-history" });
    expect((await req("/api/yield-history?stablecoin=nope-coin")).status).toBe(404);
    expect((await req("/api/yield-history?stablecoin=usdc-circle&days=0")).status).toBe(400);
    const health = await (await req("/api/health", { key: null })).json();
    expect(
      health.warnings.find((w: string) => w.startsWith("not yet available") && w.includes("dex-liquidity —")),
    ).toContain("/api/dex-liquidity answers 503");
    expect(
      health.warnings.find((w: string) => w.startsWith("not yet available") && w.includes("dex-liquidity-history —")),
    ).toContain("/api/dex-liquidity-history answers 503");
    expect(health.caches["dex-liquidity"]).toMatchObject({
      ageSeconds: null,
      healthy: false,
      sentinelValidationReason: "not-published",
    }); // listed (spec 2.8), never setting status
  });

  it("/api/usds-status answers 503 not yet available while no build holds a USDS status capture; health lists it", async () => {
    expect((await req("/api/usds-status", { key: null })).status).toBe(401);
    const r = await req("/api/usds-status");
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("60");
    expect(await r.json()).toEqual({ error: "Data not yet available: usds-status" });
    const health = await (await req("/api/health", { key: null })).json();
    expect(
      health.warnings.find((w: string) => w.startsWith("not yet available") && w.includes("usds-status")),
    ).toContain("/api/usds-status answers 503");
    expect(health.caches["usds-status"]).toMatchObject({
      ageSeconds: null,
      healthy: false,
      sentinelValidationReason: "not-published",
    }); // listed (spec 2.8), never setting status
  });

  it("webhook and site lanes are 404 unconfigured; the site lane checks its secret", async () => {
    expect((await req("/api/telegram-webhook", { method: "POST", key: null })).status).toBe(404);
    expect((await req("/api/telegram-adoption", { method: "POST", key: null })).status).toBe(404);
    const secret = "site-secret-0123456789";
    const site = createApp({
      store: new PublishedStore(fsReader(dir), 0),
      keys,
      limiter: new KeyRateLimiter(),
      corsOrigins: [],
      clockMode: "auto",
      siteProxySecret: secret,
    });
    const post = (h: Record<string, string>) => site.request("/api/telegram-adoption", { method: "POST", headers: h });
    expect((await post({})).status).toBe(401);
    expect((await post({ "X-Ballast-Site-Proxy-Secret": `${secret}x` })).status).toBe(401);
    expect((await post({ "X-Ballast-Site-Proxy-Secret": secret })).status).toBe(503);
  });

  it("invalid keys are limited per client IP on the failure path only: a valid key from that IP keeps answering 200", async () => {
    const limited = createApp({
      store: new PublishedStore(fsReader(dir), 0),
      keys,
      limiter: new KeyRateLimiter(),
      corsOrigins: [],
      clockMode: "auto",
    });
    const bogus = (i: number) => `bl_live_${"0".repeat(15)}${(i % 10).toString()}_${"A".repeat(32)}`;
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++)
      statuses.push((await limited.request("/api/stablecoins", { headers: { "X-API-Key": bogus(i) } })).status);
    expect(statuses.every((s) => s === 401)).toBe(true);
    expect((await limited.request("/api/stablecoins", { headers: { "X-API-Key": token } })).status).toBe(200);
    const over = await limited.request("/api/stablecoins", { headers: { "X-API-Key": bogus(31) } });
    expect(over.status).toBe(429);
    expect(await over.json()).toEqual({ error: "Too many invalid API keys from this address" });
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await limited.request("/api/stablecoins", { headers: { "X-API-Key": token } })).status).toBe(200);
  });

  it("CORS: echoes allowed origins, omits foreign ones, 403 on foreign preflight, first origin without Origin", async () => {
    const ok = await req("/api/health", { headers: { Origin: "https://ballast.example" } });
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://ballast.example");
    const foreign = await req("/api/health", { headers: { Origin: "https://evil.example" } });
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
    expect(
      (
        await req("/api/stablecoins", {
          method: "OPTIONS",
          key: null,
          headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "GET" },
        })
      ).status,
    ).toBe(403);
    expect((await req("/api/health")).headers.get("access-control-allow-origin")).toBe("https://ballast.example");
  });
});

describe("freshness and cache profiles", () => {
  it("fresh responses carry the route profile and data age; summary fields follow spec 2.4", async () => {
    const r = await req("/api/stablecoin-summary/usdc-circle");
    expect(r.headers.get("cache-control")).toBe("public, s-maxage=300, max-age=60, stale-while-revalidate=300");
    expect(r.headers.get("x-data-updated-at")).toBe(String(RECORDED_AS_OF));
    const s = await r.json();
    expect(s.supplyUsd.change1d).toBeCloseTo(s.supplyUsd.current - s.supplyUsd.prevDay, 3);
    expect(s.currentUnavailableReason).toBeNull();
    expect((await req("/api/stablecoin/usdc-circle")).headers.get("cache-control")).toBe(
      "public, s-maxage=300, max-age=10",
    );
  });

  it("past 8x the budget: Warning 110, no-store and degraded _meta; past 12x: stale", async () => {
    const start = clockMs;
    clockMs = start + 600 * 9 * 1000;
    const r = await req("/api/stablecoins");
    expect(r.headers.get("warning")).toMatch(/^110 /);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect((await r.json())._meta.status).toBe("degraded");
    clockMs = start + 600 * 13 * 1000;
    expect((await (await req("/api/stablecoins")).json())._meta.status).toBe("stale");
    const chains = await req("/api/chains");
    expect((await chains.json())._meta.status).toBe("stale");
    const fresh = await (await req("/api/depeg-resolver")).json();
    expect(fresh.rows.length).toBeGreaterThan(0);
    clockMs = start + 900 * 13 * 1000;
    const stale = await (await req("/api/depeg-resolver")).json();
    expect(stale.rows).toEqual([]);
    expect(stale._meta).toMatchObject({ degraded: true, status: "stale" });
    clockMs = start;
  });

  it("reused responses follow the service clock and the caller's Origin", async () => {
    const start = clockMs;
    const path = "/api/stablecoin-summary/usdt-tether";
    const a = await req(path, { headers: { Origin: "https://ballast.example" } });
    const a2 = await req(path, { headers: { Origin: "https://ballast.example" } });
    expect(await a2.text()).toBe(await a.text());
    const foreign = await req(path, { headers: { Origin: "https://evil.example" } });
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
    expect(foreign.headers.get("vary")).toBe("Origin, Accept-Encoding");
    const age0 = Number(a.headers.get("x-data-age"));
    clockMs = start + 7000;
    const later = await req(path, { headers: { Origin: "https://ballast.example" } });
    expect(Number(later.headers.get("x-data-age"))).toBe(age0 + 7);
    // Headers of a reused body are recomputed whole each second: no Warning outlives its status.
    clockMs = start + 600 * 9 * 1000;
    expect((await req(path)).headers.get("warning")).toMatch(/^110 /);
    clockMs = start + 8000;
    const again = await req(path);
    expect(again.headers.get("warning")).toBeNull();
    expect(again.headers.get("cache-control")).toBe("public, s-maxage=300, max-age=60, stale-while-revalidate=300");
    expect(later.headers.get("access-control-allow-origin")).toBe("https://ballast.example");
    clockMs = start;
  });
});

describe("rate limit and unavailable data", () => {
  it("429 with Retry-After after the key's per-minute limit", async () => {
    const limited = await keys.create({ name: "small", rateLimitPerMinute: 3 });
    for (let i = 0; i < 3; i++) expect((await req("/api/health", { key: limited.token })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await req("/api/stablecoin-charts", { key: limited.token })).status).toBe(200);
    const r = await req("/api/stablecoin-charts", { key: limited.token });
    expect(r.status).toBe(429);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await r.json()).toEqual({ error: "Rate limit exceeded" });
  });

  it("503 when a published artifact is corrupt; 503 when nothing is published", async () => {
    const m = JSON.parse(await (await import("node:fs/promises")).readFile(join(dir, "latest.json"), "utf8"));
    writeFileSync(join(dir, "builds", m.buildId, "site-data", "stablecoin-summary.json"), '{"usdt-tether": 5}');
    const store = new PublishedStore(fsReader(dir), 0);
    const broken = createApp({ store, keys, limiter: new KeyRateLimiter(), corsOrigins: [], clockMode: "auto" });
    const r = await broken.request("/api/stablecoin-summary/usdt-tether", { headers: { "X-API-Key": token } });
    expect(r.status).toBe(503);
    expect((await r.json()).error).toMatch(/not yet available/i);
    const empty = mkdtempSync(join(tmpdir(), "ballast-empty-"));
    const none = createApp({
      store: new PublishedStore(fsReader(empty), 0),
      keys,
      limiter: new KeyRateLimiter(),
      corsOrigins: [],
      clockMode: "auto",
    });
    expect((await none.request("/api/stablecoins", { headers: { "X-API-Key": token } })).status).toBe(503);
    rmSync(empty, { recursive: true });
  });
});

describe("every declared route is served", () => {
  const sample: Record<string, string> = {
    "/api/stablecoin/:stablecoinId": "/api/stablecoin/usdt-tether",
    "/api/stablecoin-summary/:stablecoinId": "/api/stablecoin-summary/usdt-tether",
    "/api/supply-history": "/api/supply-history?stablecoin=usdt-tether&days=30",
    "/api/mint-burn-events": "/api/mint-burn-events?stablecoin=usdt-tether&limit=5",
    "/api/safety-score-history": "/api/safety-score-history?stablecoin=usdc-circle&days=30",
    "/api/safety-score-history-v2": "/api/safety-score-history-v2?stablecoin=usdc-circle&days=30",
    "/api/stablecoin-reserves/:stablecoinId": "/api/stablecoin-reserves/usdt-tether",
    "/api/digest-snapshot": "/api/digest-snapshot?date=2025-09-06",
  };
  // Routes bound to an optional artifact (Bluechip ratings, USDS status) are 503 in a build without their capture (tested above and in test/e2e/bluechip-ratings.test.ts).
  // Dated snapshot routes need a backfill (the default build publishes none): test/e2e/snapshots.test.ts serves them.
  const served = ROUTES.flatMap((r) =>
    r.kind === "json" &&
    r.method === "GET" &&
    !r.notYetAvailable &&
    !r.artifact?.optional &&
    r.lane !== "admin" &&
    !r.path.startsWith("/api/og/") &&
    r.cache !== "immutable-snapshot" &&
    !r.path.startsWith("/api/telegram-")
      ? [r]
      : [],
  ); // the bot's pulse: test/api/telegram*.test.ts
  // Its own key: requesting every route twice would spend the shared test key's 120 per minute.
  let routesKey = "";
  beforeAll(async () => {
    routesKey = (await keys.create({ name: "routes", rateLimitPerMinute: 1000 })).token;
  });

  it("answers 200 on each route with a valid request, matching its declared schema", async () => {
    expect(served.length).toBeGreaterThanOrEqual(12);
    for (const r of served) {
      const path = sample[r.path] ?? r.path;
      const res = await req(path, { key: routesKey });
      expect(res.status, path).toBe(200);
      const schema = r.response ?? r.artifact?.output.schema;
      if (schema) schema.parse(JSON.parse((await res.text()).replace(/,"_meta":\{[^}]*\}\}$/, "}")));
    }
    const one = await (await req("/api/chains?chain=tron")).json();
    expect(one.coins[0].id).toBe("usdt-tether");
  });

  it("/api/chains rows carry chain health (ballast-chain-health-v1) recomputable from their components", async () => {
    // own key: the shared test key's per-minute budget is spent by the other route tests
    const key = (await keys.create({ name: "chains", rateLimitPerMinute: 1000 })).token;
    const body = (await (await req("/api/chains", { key })).json()) as z.infer<typeof ChainsPayloadSchema>;
    expect(body.healthMethodologyVersion).toBe("ballast-chain-health-v1");
    const byId = new Map(body.chains.map((c) => [c.id, c]));
    const chain = (id: string) => must(byId.get(id), `chain ${id} in /api/chains`);
    const W = {
      quality: 0.3,
      chainEnvironment: 0.2,
      concentration: 0.2,
      pegStability: 0.2,
      backingDiversity: 0.1,
    } as const;
    const band = (s: number) =>
      s >= 80 ? "robust" : s >= 60 ? "healthy" : s >= 40 ? "mixed" : s >= 20 ? "fragile" : "concentrated";
    expect(body.chains.length).toBeGreaterThan(0);
    for (const c of body.chains) {
      expect(c.healthMethodologyVersion).toBe("ballast-chain-health-v1");
      if (c.healthScore === null) {
        expect(c.healthBand).toBeNull();
        expect(["rated-share-below-50pct", "no-supply"]).toContain(c.healthInputs?.unavailableReason);
        continue;
      }
      const components = must(c.healthComponents, `${c.id} healthComponents`);
      const weights = Object.entries(W) as [keyof typeof W, number][];
      const sum = weights.reduce((s, [k, w]) => s + w * must(components[k], `${c.id} healthComponents.${k}`), 0);
      expect(Math.abs(c.healthScore - sum), c.id).toBeLessThanOrEqual(0.5 + 1e-9);
      expect(c.healthBand).toBe(band(c.healthScore));
      expect(c.healthInputs?.ratedShare).toBeGreaterThanOrEqual(0.5);
      // concentration = round(100 × (1 − HHI)), the row's coinHhi
      expect(components.concentration).toBe(Math.round(100 * (1 - must(c.coinHhi, `${c.id} coinHhi`))));
    }
    // curated tiers; a chain without one gets the neutral 50 and says so
    expect(chain("ethereum").healthInputs).toMatchObject({
      chainTier: "ethereum",
      chainEnvironmentBasis: "curated-tier",
    });
    expect(chain("ethereum").healthComponents?.chainEnvironment).toBe(100);
    expect(chain("tron").healthComponents?.chainEnvironment).toBe(45);
    expect(chain("arbitrum").healthComponents?.chainEnvironment).toBe(66);
    expect(chain("polygon").healthInputs).toMatchObject({ chainTier: null, chainEnvironmentBasis: "unknown-tier" });
    expect(chain("polygon").healthComponents?.chainEnvironment).toBe(50);
    // default recorded build (as of 2025-09-07): Ethereum robust; Tron mixed (USDT is 98.5% of it: concentration 3); BSC healthy
    expect([chain("ethereum").healthBand, chain("tron").healthBand, chain("bsc").healthBand]).toEqual([
      "robust",
      "mixed",
      "healthy",
    ]);
    expect(chain("tron").healthComponents?.concentration).toBeLessThan(10);
    expect(chain("tron").healthBand).toBe("mixed");
    const one = await (await req("/api/chains?chain=ethereum", { key })).json();
    expect(one.chain).toEqual(chain("ethereum"));
    expect(one.healthMethodologyVersion).toBe("ballast-chain-health-v1");
  });

  it("unknown query parameters are 400 naming them on every served route", async () => {
    expect(served.length).toBeGreaterThanOrEqual(12);
    for (const r of served) {
      const base = sample[r.path] ?? r.path;
      const res = await req(`${base}${base.includes("?") ? "&" : "?"}zzbogus=1`, { key: routesKey });
      expect(res.status, base).toBe(400);
      expect((await res.json()).error, base).toBe("Invalid parameter zzbogus: unknown parameter");
    }
  });

  it("validation messages state the accepted range, never a number-type limit", async () => {
    for (const path of [
      "/api/depeg-events?limit=99999999999999999999",
      "/api/depeg-events?offset=-1",
      "/api/events?since=99999999999999999",
      "/api/non-usd-share?days=1e3",
    ]) {
      const { error } = await (await req(path)).json();
      expect(error, path).toMatch(/^Invalid parameter (limit|offset|since|days): must be an integer from \d+ to \d+$/);
    }
  });

  it("keyed responses carry Vary: Origin (with or without Origin); compressed by Accept-Encoding, identical when decoded", async () => {
    const plain = await req("/api/stablecoins");
    expect(plain.headers.get("vary")).toContain("Origin");
    expect(plain.headers.get("content-encoding")).toBeNull();
    const text = await plain.text();
    const br = await req("/api/stablecoins", { headers: { "Accept-Encoding": "br, gzip" } });
    expect(br.headers.get("content-encoding")).toBe("br");
    expect(br.headers.get("vary")).toBe("Origin, Accept-Encoding");
    const brBytes = Buffer.from(await br.arrayBuffer());
    expect(brBytes.length).toBeLessThan(text.length / 4);
    expect(brotliDecompressSync(brBytes).toString("utf8")).toBe(text);
    const gz = await req("/api/stablecoins", { headers: { "Accept-Encoding": "gzip;q=1, br;q=0" } });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(gunzipSync(Buffer.from(await gz.arrayBuffer())).toString("utf8")).toBe(text);
    // A route that serves a published file as is sends the build's stored br sibling.
    const charts = await req("/api/stablecoin-charts", { headers: { "Accept-Encoding": "br" } });
    const m = JSON.parse(readFileSync(join(dir, "latest.json"), "utf8"));
    expect(
      Buffer.from(await charts.arrayBuffer()).equals(
        readFileSync(join(dir, "builds", m.buildId, "site-data", "stablecoin-charts.json.br")),
      ),
    ).toBe(true);
  });

  it("static files: Postman collection and environment, OpenAPI with servers and operationIds, dataset preflight", async () => {
    const col = await req("/postman/ballast.postman_collection.json", { key: null });
    expect(col.status).toBe(200);
    const collection = await col.json();
    const requests = collection.item.flatMap((g: { item: unknown[] }) => g.item);
    expect(requests.length).toBe(ROUTES.filter((r) => r.lane !== "admin").length);
    const env = await (await req("/postman/ballast.postman_environment.json", { key: null })).json();
    expect(env.values.map((v: { key: string }) => v.key)).toEqual(["baseUrl", "apiKey"]);
    const oa = await req("/openapi.json", { key: null });
    expect(oa.headers.get("cache-control")).toBe("public, max-age=300");
    const doc = await oa.json();
    expect(doc.servers[0].url).toMatch(/^http/);
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p as Record<string, { operationId: string }>));
    expect(new Set(ops.map((o) => o.operationId)).size).toBe(ops.length);
    const { methodology } = await (await req("/api/depeg-events?limit=1")).json();
    const changelog = await req(methodology.changelogPath, { key: null });
    expect(changelog.status).toBe(200);
    expect(changelog.headers.get("content-type")).toMatch(/^text\/markdown/);
    expect(await changelog.text()).toContain(methodology.version);
    const pre = await req("/datasets/top-stablecoins/latest.csv", {
      method: "OPTIONS",
      key: null,
      headers: { Origin: "https://anyone.example", "Access-Control-Request-Method": "GET" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    const csv = await req("/datasets/top-stablecoins/latest.csv", {
      key: null,
      headers: { "Accept-Encoding": "gzip" },
    });
    expect(csv.status).toBe(200);
    expect(
      gunzipSync(Buffer.from(await csv.arrayBuffer()))
        .toString("utf8")
        .split("\n")[0],
    ).toContain(",");
  });
});

describe("risk routes: stability index and stress signals", () => {
  const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 1000;
  // Its own key, so these requests leave the shared key's per-minute budget to the other tests.
  let riskKey: string;
  beforeAll(async () => {
    riskKey = (await keys.create({ name: "risk", rateLimitPerMinute: 1000 })).token;
  });
  const rreq = (path: string) => req(path, { key: riskKey });

  it("/api/stability-index: current of the as-of day, 91 rows by default, detail with components, CRISIS/MELTDOWN in May 2022 and on 2023-03-11", async () => {
    const res = await rreq("/api/stability-index");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, s-maxage=300, max-age=60");
    const body = await res.json();
    expect(body.history).toHaveLength(91);
    expect(body.history.at(-1).date).toBe(RECORDED_AS_OF - 86400);
    expect(body.history[0]).not.toHaveProperty("components");
    expect(body).not.toHaveProperty("malformedRows");
    expect(body.methodology).toMatchObject({
      version: "ballast-stability-index-v1",
      changelogPath: "/methodology/stability-index.md",
    });
    expect(body.current).toMatchObject({
      methodologyVersion: "ballast-stability-index-v1",
      computedAt: RECORDED_AS_OF,
    });
    expect(body.current.avg24h).toBe(body.current.score);
    expect(Object.keys(body.current.components).sort()).toEqual(["breadth", "severity", "stressBreadth", "trend"]);
    const detail = await (await rreq("/api/stability-index?detail=true")).json();
    expect(detail.malformedRows).toBe(0);
    expect(detail.history.length).toBeGreaterThan(3000);
    const at = (iso: string) => detail.history.find((h: { date: number }) => h.date === day(iso));
    expect(at("2022-05-12").band).toMatch(/^(CRISIS|MELTDOWN)$/);
    expect(at("2023-03-11").band).toMatch(/^(CRISIS|MELTDOWN)$/);
    expect(at("2023-03-11").components.severity).toBe(68);
    expect(at("2021-07-01").band).toMatch(/^(BEDROCK|STEADY)$/);
    expect((await (await rreq("/api/stability-index?days=7")).json()).history).toHaveLength(7);
    for (const [q, name] of [
      ["days=0", "days"],
      ["days=5001", "days"],
      ["days=abc", "days"],
      ["detail=yes", "detail"],
    ]) {
      const r = await rreq(`/api/stability-index?${q}`);
      expect(r.status, q).toBe(400);
      expect((await r.json()).error, q).toMatch(new RegExp(`^Invalid parameter ${name}: `));
    }
  });

  it("/api/stress-signals: universe and one coin; 404 unknown id; 400 bad days; NAV tokens unavailable, never zero", async () => {
    const u = await (await rreq("/api/stress-signals")).json();
    expect(u.scope).toBe("universe");
    expect(u.coins.length).toBeGreaterThan(50);
    expect(u.summary.date).toBe(RECORDED_AS_OF - 86400);
    expect(u.history.length).toBeLessThanOrEqual(30);
    for (const c of u.coins) {
      expect(c.signals.poolDrift).toMatchObject({ available: false, value: null });
      expect(c.availableWeight).toBeGreaterThanOrEqual(0.3);
    }
    const usdt = await (await rreq("/api/stress-signals?stablecoin=usdt-tether&days=7")).json();
    expect(usdt).toMatchObject({ scope: "coin", stablecoinId: "usdt-tether", unavailableReason: null });
    expect(usdt.current.methodologyVersion).toBe("ballast-dews-v1");
    expect(usdt.history.length).toBeLessThanOrEqual(7);
    const nav = await (await rreq("/api/stress-signals?stablecoin=usyc-circle")).json();
    expect(nav).toMatchObject({ current: null, unavailableReason: "nav-token" });
    expect((await rreq("/api/stress-signals?stablecoin=USDT")).status).toBe(404);
    expect((await rreq("/api/stress-signals?stablecoin=not-a-coin")).status).toBe(404);
    for (const q of ["days=0", "days=366", "days=1.5"]) {
      const r = await rreq(`/api/stress-signals?${q}`);
      expect(r.status, q).toBe(400);
      expect((await r.json()).error, q).toBe("Invalid parameter days: must be an integer from 1 to 365");
    }
  });
});

describe("peg monitoring routes", () => {
  it("/api/depeg-events paged by cursor returns every incident exactly once, newest first", async () => {
    const all = await (await req("/api/depeg-events?limit=1000")).json();
    expect(all.totalExact).toBe(true);
    expect(all.total).toBeGreaterThan(50);
    expect(all.counts.incidents).toBe(all.total);
    expect(all.counts.thresholdCrossings).toBeGreaterThanOrEqual(all.total);
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { events: { id: number; startedAt: number }[]; nextCursor: string | null } = await (
        await req(`/api/depeg-events?limit=17&includeTotal=false${cursor ? `&cursor=${cursor}` : ""}`)
      ).json();
      seen.push(...page.events.map((e) => e.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 100);
    expect(seen).toHaveLength(all.total);
    expect(new Set(seen).size).toBe(all.total);
    const keys = all.events.map((e: { startedAt: number; id: number }) => [e.startedAt, e.id]);
    const sorted = [...keys].sort((a, b) => b[0] - a[0] || b[1] - a[1]);
    expect(keys).toEqual(sorted);
    expect(seen).toEqual(all.events.map((e: { id: number }) => e.id));
  });

  it("depeg-events filters and errors: active, stablecoin, offset vs cursor, bad cursor, unknown coin, limits", async () => {
    const active = await (await req("/api/depeg-events?active=true&limit=1000")).json();
    expect(active.events.length).toBeGreaterThan(0);
    expect(active.events.every((e: { endedAt: number | null }) => e.endedAt === null)).toBe(true);
    const offset = await (await req("/api/depeg-events?limit=2&offset=3")).json();
    const first = await (await req("/api/depeg-events?limit=5")).json();
    expect(offset.events.map((e: { id: number }) => e.id)).toEqual(
      first.events.slice(3, 5).map((e: { id: number }) => e.id),
    );
    expect((await req(`/api/depeg-events?offset=1&cursor=${first.nextCursor}`)).status).toBe(400);
    const bad = await req("/api/depeg-events?cursor=notacursor");
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/^Invalid parameter cursor/);
    expect((await req("/api/depeg-events?stablecoin=zzz-nobody")).status).toBe(404);
    expect((await req("/api/depeg-events?stablecoin=USDC")).status).toBe(404);
    expect((await (await req("/api/depeg-events?limit=1001")).json()).error).toMatch(/^Invalid parameter limit/);
    expect((await req("/api/depeg-events?offset=50001")).status).toBe(400);
    const withPending = await (await req("/api/depeg-events?includePending=true&limit=1")).json();
    expect(Array.isArray(withPending.pending)).toBe(true);
    expect(withPending.methodology.version).toBe("ballast-depeg-v4");
  });

  it("backtest facts: UST below peg from 2022-05-09, never recovered (tracking ended after its death); USDC/SVB confirmed by CEX, peak from intraday, recovered by 2023-03-14", async () => {
    const ust = (await (await req("/api/depeg-events?stablecoin=ust-terraform-labs&limit=1000")).json()).events.find(
      (e: { startedAt: number }) =>
        e.startedAt >= Date.parse("2022-05-01T00:00:00Z") / 1000 &&
        e.startedAt < Date.parse("2022-06-01T00:00:00Z") / 1000,
    );
    // starts with the 0.754 prints (2022-05-09 00:00Z); tracking of the dead coin ends 30 days after its death (2022-05-09)
    expect(ust).toMatchObject({
      direction: "below",
      startedAt: Date.parse("2022-05-09T00:00:00Z") / 1000,
      closeReason: "orphan-tracking-removed",
    });
    expect(ust.endedAt).toBeLessThanOrEqual(Date.parse("2022-06-10T00:00:00Z") / 1000);
    expect(ust.peakDeviationBps).toBeLessThanOrEqual(-9000);
    const usdc = (await (await req("/api/depeg-events?stablecoin=usdc-circle&limit=1000")).json()).events.find(
      (e: { startedAt: number }) =>
        e.startedAt >= Date.parse("2023-03-10T00:00:00Z") / 1000 &&
        e.startedAt < Date.parse("2023-03-12T00:00:00Z") / 1000,
    );
    expect(usdc.direction).toBe("below");
    expect(usdc.peakDeviationBps).toBeGreaterThanOrEqual(-1300);
    expect(usdc.peakDeviationBps).toBeLessThanOrEqual(-900);
    expect(usdc.confirmationSources.split("+")).toContain("CEX");
    expect(usdc.closeReason).toBe("recovered-primary");
    expect(usdc.endedAt).toBeLessThan(Date.parse("2023-03-15T00:00:00Z") / 1000);
    expect(usdc.recoveryPrice).toBeGreaterThan(0.99);
  });

  it("events tape: filters by class and severity, pages by cursor, 400 on bad parameters", async () => {
    const crit = await (await req("/api/events?severityFloor=critical&limit=500&includeTotal=true")).json();
    expect(crit.events.length).toBeGreaterThan(0);
    expect(crit.events.every((e: { severity: string }) => e.severity === "critical")).toBe(true);
    expect(crit.total).toBe(crit.events.length);
    const started = await (
      await req("/api/events?type=depeg.started&coin=usdc-circle,ust-terraform-labs&limit=500")
    ).json();
    expect(new Set(started.events.map((e: { stablecoinId: string }) => e.stablecoinId))).toEqual(
      new Set(["usdc-circle", "ust-terraform-labs"]),
    );
    const p1 = await (await req("/api/events?limit=3")).json();
    const p2 = await (await req(`/api/events?limit=3&cursor=${p1.nextCursor}`)).json();
    const both = await (await req("/api/events?limit=6")).json();
    expect([...p1.events, ...p2.events].map((e: { id: string }) => e.id)).toEqual(
      both.events.map((e: { id: string }) => e.id),
    );
    expect(both._meta.status).toBe("fresh");
    expect((await req("/api/events?severityFloor=loud")).status).toBe(400);
    expect((await req("/api/events?type=Bad Type")).status).toBe(400);
  });

  it("resolver rows use the spec states; review compares sealed predictions with outcomes", async () => {
    const r = await (await req("/api/depeg-resolver")).json();
    expect(r._meta).toMatchObject({ degraded: false, modelAsOf: RECORDED_AS_OF });
    expect(r.rows.length).toBeGreaterThan(0);
    for (const row of r.rows) {
      if (row.state === "frozen") {
        expect(["forecast_readiness", "readiness_backstop"]).toContain(row.lockTrigger);
        if (row.lockTrigger === "forecast_readiness") expect(row.readiness.score).toBeGreaterThan(0.75);
        else expect(row.lockedAt).toBeGreaterThanOrEqual(row.startedAt + 72 * 3600);
      }
      if (row.state === "closed_pre_lock") expect(row.liveOverlay.active).toBe(false);
    }
    const review = await (await req("/api/depeg-resolver-review")).json();
    const frozenEnded = r.rows.filter(
      (x: { state: string; liveOverlay: { active: boolean } }) => x.state === "frozen" && !x.liveOverlay.active,
    ).length;
    expect(review.summary.reviewedCount).toBe(frozenEnded);
    expect(review.outcomes.length).toBeGreaterThan(0);
    for (const o of review.outcomes)
      if (o.predictedDurationSec !== null)
        expect(o.durationErrorSec).toBe(o.observedDurationSec - o.predictedDurationSec);
  });

  it("peg summary scores listed coins and the list carries consensus price fields", async () => {
    const s = await (await req("/api/peg-summary")).json();
    // one definition of "open at as-of": the summary's active coins are exactly the coins of the open incidents
    const open = (await (await req("/api/depeg-events?active=true&limit=1000")).json()).events as {
      stablecoinId: string;
    }[];
    expect(open.length).toBeGreaterThan(0);
    expect(s.summary.activeDepegCount).toBe(open.length);
    expect(
      s.coins
        .filter((c: { activeDepeg: boolean }) => c.activeDepeg)
        .map((c: { id: string }) => c.id)
        .sort(),
    ).toEqual(open.map((e) => e.stablecoinId).sort());
    // UST died in 2022: its collapse is history, not an active depeg three years later
    const ust = s.coins.find((c: { id: string }) => c.id === "ust-terraform-labs");
    expect(ust.activeDepeg).toBe(false);
    const usdt = s.coins.find((c: { id: string }) => c.id === "usdt-tether");
    expect(usdt.pegScore).toBeGreaterThanOrEqual(0);
    expect(usdt.referenceEvidence.referenceSource).toBe("par");
    const list = await (await req("/api/stablecoins")).json();
    expect(list.peggedAssets.length).toBeGreaterThan(0);
    for (const c of list.peggedAssets) {
      if (c.price === null) expect(c.priceSource).toBe("missing");
      else expect(c.consensusSources.length).toBeGreaterThan(0);
    }
  });
});

describe("website-internal lane and the same-origin proxy (issue 19 item 5, spec 1 and 5.7)", () => {
  const SECRET = "site-secret-0123456789abcdef",
    PREVIOUS = "site-secret-previous-0123456";
  let site: ReturnType<typeof createApp>;
  beforeAll(() => {
    site = createApp({
      store: new PublishedStore(fsReader(dir), 0, () => clockMs),
      keys,
      limiter: new KeyRateLimiter(),
      corsOrigins: ["https://ballast.example", "https://ops.ballast.example"],
      clockMode: "auto",
      nowMs: () => clockMs,
      siteProxySecret: SECRET,
      siteProxySecretPrevious: PREVIOUS,
    });
  });

  it("a keyed read with the site secret needs no key and spends no quota; a wrong secret is 401; the previous secret works while configured", async () => {
    const ok = await site.request("/api/stablecoins", { headers: { "X-Ballast-Site-Proxy-Secret": SECRET } });
    expect(ok.status).toBe(200);
    expect((await ok.json()).peggedAssets.length).toBeGreaterThan(50);
    expect(
      (await site.request("/api/peg-summary", { headers: { "X-Ballast-Site-Proxy-Secret": PREVIOUS } })).status,
    ).toBe(200);
    const wrong = await site.request("/api/stablecoins", {
      headers: { "X-Ballast-Site-Proxy-Secret": "x".repeat(SECRET.length) },
    });
    expect([wrong.status, (await wrong.json()).error]).toEqual([401, "Unauthorized"]);
    // the site lane spends no key quota: a 1/min key sent beside the secret is never consumed
    const one = (await keys.create({ name: "one-per-minute", rateLimitPerMinute: 1 })).token;
    for (let i = 0; i < 3; i++)
      expect(
        (await site.request("/api/chains", { headers: { "X-Ballast-Site-Proxy-Secret": SECRET, "X-API-Key": one } }))
          .status,
      ).toBe(200);
    expect((await site.request("/api/chains", { headers: { "X-API-Key": one } })).status).toBe(200);
    expect((await site.request("/api/chains", { headers: { "X-API-Key": one } })).status).toBe(429);
    // without a configured secret the lane is not served: the header is judged and refused (404), never ignored
    expect(
      (await req("/api/stablecoins", { key: null, headers: { "X-Ballast-Site-Proxy-Secret": SECRET } })).status,
    ).toBe(404);
  });

  it("/_site-data/<x> from an allowlisted page answers /api/<x> with its status, body and cache headers unchanged", async () => {
    const direct = await site.request("/api/peg-summary", { headers: { "X-Ballast-Site-Proxy-Secret": SECRET } });
    expect(direct.status).toBe(200);
    const proxied = await site.request("/_site-data/peg-summary", { headers: { Origin: "https://ballast.example" } });
    expect(proxied.status).toBe(200);
    expect(await proxied.text()).toBe(await direct.text());
    for (const h of ["cache-control", "x-data-age", "content-type"])
      expect(proxied.headers.get(h), h).toBe(direct.headers.get(h));
    // Referer when there is no Origin; query strings pass through, so a bad parameter is the API's 400
    const viaReferer = await site.request("/_site-data/supply-history?stablecoin=usdt-tether&days=7", {
      headers: { Referer: "https://ops.ballast.example/coins/usdt" },
    });
    expect(viaReferer.status).toBe(200);
    const bad = await site.request("/_site-data/supply-history?stablecoin=usdt-tether&days=abc", {
      headers: { Origin: "https://ballast.example" },
    });
    expect([bad.status, (await bad.json()).error]).toEqual([400, expect.stringContaining("days")]);
  });

  it("/_site-data refuses other sites (404, not 403), pages without an origin, and every method but GET (405 Allow: GET)", async () => {
    expect(
      (await site.request("/_site-data/stablecoins", { headers: { Origin: "https://evil.example" } })).status,
    ).toBe(404);
    expect(
      (
        await site.request("/_site-data/stablecoins", {
          headers: { Origin: "null", Referer: "https://evil.example/x" },
        })
      ).status,
    ).toBe(404);
    expect((await site.request("/_site-data/stablecoins")).status).toBe(404);
    const post = await site.request("/_site-data/stablecoins", {
      method: "POST",
      headers: { Origin: "https://ballast.example" },
    });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET"]);
    // the proxy cannot reach operator paths: they stay 404
    expect(
      (await site.request("/_site-data/api-keys", { headers: { Origin: "https://ballast.example" } })).status,
    ).toBe(404);
    // not configured: 404 for everyone
    expect(
      (await req("/_site-data/stablecoins", { key: null, headers: { Origin: "https://ballast.example" } })).status,
    ).toBe(404);
  });
});
