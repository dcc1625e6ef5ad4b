import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { ROUTES } from "../../api/routes.ts";
import { buildRecorded, RECORDED_AS_OF } from "../helpers/build-once.ts";

const PG = "postgres://postgres@127.0.0.1:5432/test";
const schema = `ballast_test_${process.pid}_${Date.now()}`;
let sql: SqlClient;
let keys: KeyStore;
let app: ReturnType<typeof createApp>;
let token: string;
let dir: string;
let clockMs = 0;

beforeAll(async () => {
  ({ dir } = await buildRecorded());
  const admin = new pg.Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  sql = await openSqlClient({ databaseUrl: `${PG}?options=-csearch_path%3D${schema}`, pgliteDir: "" });
  keys = new KeyStore(sql, "pepper-for-tests-0123456789");
  await keys.init();
  token = (await keys.create({ name: "t" })).token;
  clockMs = Date.now();
  app = createApp({ store: new PublishedStore(fsReader(dir), 0, () => clockMs), keys, limiter: new KeyRateLimiter(), corsOrigins: ["https://ballast.example"], clockMode: "auto", nowMs: () => clockMs });
});
afterAll(async () => {
  await sql?.close();
  const admin = new pg.Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`drop schema if exists ${schema} cascade`);
  await admin.end();
});

const req = (path: string, init: RequestInit & { key?: string | null } = {}) => {
  const headers = new Headers(init.headers);
  if (init.key !== null) headers.set("X-API-Key", init.key ?? token);
  return app.request(path, { ...init, headers });
};

describe("key store on a real Postgres", () => {
  it("stores only prefix and keyed hash; verifies; rejects tampered, inactive and expired keys", async () => {
    const { rows } = await sql.query<{ key_prefix: string; secret_hash: string }>("select key_prefix, secret_hash from api_keys");
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
      ["/api/supply-history", "stablecoin"], ["/api/supply-history?stablecoin=usdt-tether&days=abc", "days"],
      ["/api/supply-history?stablecoin=usdt-tether&days=0", "days"], ["/api/non-usd-share?days=5", "days"], ["/api/chains?bogus=1", "bogus"],
    ];
    for (const [path, param] of cases) {
      const r = await req(path);
      expect(r.status, path).toBe(400);
      expect((await r.json()).error).toContain(param);
    }
  });

  it("405 rules: unknown POST → Allow: GET; other verbs → Allow: GET, POST", async () => {
    const p = await req("/api/stablecoins", { method: "POST" });
    expect(p.status).toBe(405);
    expect(p.headers.get("allow")).toBe("GET");
    const d = await req("/api/stablecoins", { method: "DELETE" });
    expect(d.status).toBe(405);
    expect(d.headers.get("allow")).toBe("GET, POST");
  });

  it("CORS: echoes allowed origins, omits foreign ones, 403 on foreign preflight, first origin without Origin", async () => {
    const ok = await req("/api/health", { headers: { Origin: "https://ballast.example" } });
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://ballast.example");
    const foreign = await req("/api/health", { headers: { Origin: "https://evil.example" } });
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
    expect((await req("/api/stablecoins", { method: "OPTIONS", key: null, headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "GET" } })).status).toBe(403);
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
    expect((await req("/api/stablecoin/usdc-circle")).headers.get("cache-control")).toBe("public, s-maxage=300, max-age=10");
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
    expect(foreign.headers.get("vary")).toBe("Origin");
    const age0 = Number(a.headers.get("x-data-age"));
    clockMs = start + 7000;
    const later = await req(path, { headers: { Origin: "https://ballast.example" } });
    expect(Number(later.headers.get("x-data-age"))).toBe(age0 + 7);
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
    writeFileSync(join(dir, "builds", m.buildId, "site-data", "stablecoin-summary.json"), "{\"usdt-tether\": 5}");
    const store = new PublishedStore(fsReader(dir), 0);
    const broken = createApp({ store, keys, limiter: new KeyRateLimiter(), corsOrigins: [], clockMode: "auto" });
    const r = await broken.request("/api/stablecoin-summary/usdt-tether", { headers: { "X-API-Key": token } });
    expect(r.status).toBe(503);
    expect((await r.json()).error).toMatch(/not yet available/i);
    const empty = mkdtempSync(join(tmpdir(), "ballast-empty-"));
    const none = createApp({ store: new PublishedStore(fsReader(empty), 0), keys, limiter: new KeyRateLimiter(), corsOrigins: [], clockMode: "auto" });
    expect((await none.request("/api/stablecoins", { headers: { "X-API-Key": token } })).status).toBe(503);
    rmSync(empty, { recursive: true });
  });
});

describe("every declared route is served", () => {
  it("answers 200 on each route with a valid request", async () => {
    const sample: Record<string, string> = {
      "/api/stablecoin/:stablecoinId": "/api/stablecoin/usdt-tether",
      "/api/stablecoin-summary/:stablecoinId": "/api/stablecoin-summary/usdt-tether",
      "/api/supply-history": "/api/supply-history?stablecoin=usdt-tether&days=30",
    };
    for (const r of ROUTES) {
      const path = sample[r.path] ?? r.path;
      const res = await req(path);
      expect(res.status, path).toBe(200);
      r.response.parse(JSON.parse((await res.text()).replace(/,"_meta":\{[^}]*\}\}$/, "}")));
    }
    const one = await (await req("/api/chains?chain=tron")).json();
    expect(one.coins[0].id).toBe("usdt-tether");
  });
});
