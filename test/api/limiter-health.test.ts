import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { KeyRateLimiter, openRedis } from "../../api/lib/rate-limit.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";
import { OwnRedis } from "../helpers/redis-server.ts";
import { coinListStore } from "../helpers/telegram.ts";

/**
 * Health shows a limiter store outage (issue 30 item 4): while the test's own redis-server is
 * stopped keyed requests answer 503 and `/api/health` reports `limiterStore` unavailable with since
 * when and why (cause `limiter-unhealthy`); once it is back, health says so without keyed traffic.
 */

let own: OwnRedis;
let client: Redis;
let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: SqlClient;
let token: string;
/** A key first used during the outage (no local verification cache entry, so it fails closed). */
let fresh: string;
let app: ReturnType<typeof createApp>;

beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  own = await OwnRedis.start();
  client = await openRedis(own.url, { timeoutMs: 300 });
  schema = await createTestSchema("ballast_limiter_health");
  sql = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  const keys = new KeyStore(sql, "pepper-for-tests-0123456789");
  await keys.init();
  token = (await keys.create({ name: "t", rateLimitPerMinute: 10000 }, { maxRateLimitPerMinute: 10000 })).token;
  fresh = (await keys.create({ name: "u", rateLimitPerMinute: 10000 }, { maxRateLimitPerMinute: 10000 })).token;
  const limiter = new KeyRateLimiter(client, { timeoutMs: 300 });
  app = createApp({
    store: coinListStore(Date.now),
    keys,
    limiter,
    corsOrigins: [],
    clockMode: "wall",
    services: { limiterStore: () => limiter.status() },
  });
});

afterAll(async () => {
  client?.disconnect();
  await own?.stop();
  await sql?.close();
  await schema?.drop();
});

interface HealthBody {
  status: string;
  warnings: string[];
  limiterStore?: { state: string; backend: string; since: number | null; reason: string | null };
}
const health = async () => (await (await app.request("/api/health")).json()) as HealthBody;
const keyed = (key = token) => app.request("/api/stablecoins", { headers: { "X-API-Key": key } });

describe("limiter store in /api/health", () => {
  it("down: keyed requests 503 and health says limiterStore unavailable since when and why; back: ok again", async () => {
    expect((await keyed()).status).toBe(200);
    const up = await health();
    expect(up.limiterStore).toMatchObject({ state: "ok", backend: "redis", reason: null });
    expect(up.warnings.some((w) => w.startsWith("rate limiter store"))).toBe(false);

    const t0 = Math.floor(Date.now() / 1000);
    await own.stop();
    expect((await keyed(fresh)).status).toBe(503);
    const down = await health();
    expect(down.limiterStore?.state).toBe("unavailable");
    expect(down.limiterStore?.backend).toBe("redis");
    expect(down.limiterStore?.reason).toMatch(/^connection (refused|lost)$/);
    const since = down.limiterStore?.since ?? 0;
    expect(since).toBeGreaterThanOrEqual(t0);
    expect(since).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(down.status).not.toBe("healthy");
    expect(down.warnings[0]).toMatch(
      /^rate limiter store \(redis\) unavailable \(sets status degraded\): connection (refused|lost) since /,
    );

    // Back: health heals without keyed traffic (the client's reconnect, or the probe a health call starts).
    await own.start();
    let back = await health();
    while (back.limiterStore?.state !== "ok") {
      await new Promise((r) => setTimeout(r, 100));
      back = await health();
    }
    expect(back.limiterStore?.reason).toBeNull();
    expect(back.limiterStore?.since ?? 0).toBeGreaterThanOrEqual(since);
    expect(back.warnings.some((w) => w.startsWith("rate limiter store"))).toBe(false);
    expect((await keyed()).status).toBe(200);
  });
});
