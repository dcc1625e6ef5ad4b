import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyRateLimiter, openRedis, RateLimiterUnavailableError } from "../../api/lib/rate-limit.ts";
import { OwnRedis } from "../helpers/redis-server.ts";

const redis = new Redis("redis://127.0.0.1:6379", { maxRetriesPerRequest: 1 });
afterAll(() => redis.disconnect());
const unique = (s: string) => `${s}-${process.pid}-${Date.now()}`;

describe("shared rate limiter on a real Redis", () => {
  it("two API instances share one per-key budget", async () => {
    const a = new KeyRateLimiter(redis);
    const b = new KeyRateLimiter(redis);
    const key = unique("k");
    expect(await a.consume(key, 3)).toEqual({ ok: true });
    expect(await b.consume(key, 3)).toEqual({ ok: true });
    expect(await a.consume(key, 3)).toEqual({ ok: true });
    const refused = await b.consume(key, 3);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.retryAfterSec).toBeGreaterThanOrEqual(1);
  });

  it("generic buckets: a per-IP budget of failed key attempts is separate from key budgets", async () => {
    const l = new KeyRateLimiter(redis);
    const ip = unique("authfail:203.0.113.7");
    expect(await l.consume(ip, 2)).toEqual({ ok: true });
    expect(await l.consume(ip, 2)).toEqual({ ok: true });
    expect((await l.consume(ip, 2)).ok).toBe(false);
    expect(await l.consume(unique("authfail:203.0.113.8"), 2)).toEqual({ ok: true });
    expect(await l.consume(unique("key"), 2)).toEqual({ ok: true });
  });

  it("rejects a non-positive or fractional budget", async () => {
    const l = new KeyRateLimiter();
    await expect(l.consume("x", 0)).rejects.toThrow(RangeError);
    await expect(l.consume("x", 1.5)).rejects.toThrow(RangeError);
  });
});

describe("limiter deadline on an own redis-server (paused, stopped)", () => {
  let own: OwnRedis;
  let client: Redis;
  beforeAll(async () => {
    own = await OwnRedis.start();
    client = await openRedis(own.url, { timeoutMs: 300 });
    await new Promise<void>((r) => (client.status === "ready" ? r() : client.once("ready", () => r())));
  });
  afterAll(async () => {
    client?.disconnect();
    await own?.stop();
  });

  const timedFailure = async (l: KeyRateLimiter) => {
    const t0 = performance.now();
    const err = await l.consume(unique("k"), 10).then(() => null, (e: unknown) => e);
    return { err, ms: performance.now() - t0 };
  };

  it("throws RateLimiterUnavailableError within the deadline while Redis is paused, then recovers", async () => {
    const l = new KeyRateLimiter(client, { timeoutMs: 300 });
    expect(await l.consume(unique("k"), 10)).toEqual({ ok: true });
    const ctl = new Redis(own.url);
    await ctl.call("CLIENT", "PAUSE", "1500", "ALL");
    const { err, ms } = await timedFailure(l);
    expect(err).toBeInstanceOf(RateLimiterUnavailableError);
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(600);
    await new Promise((r) => setTimeout(r, 1600));
    expect(await l.consume(unique("k"), 10)).toEqual({ ok: true });
    ctl.disconnect();
  });

  it("fails at once while Redis is stopped, and works again after a restart", async () => {
    const l = new KeyRateLimiter(client, { timeoutMs: 300 });
    await own.stop();
    const { err, ms } = await timedFailure(l);
    expect(err).toBeInstanceOf(RateLimiterUnavailableError);
    expect(ms).toBeLessThan(300);
    await own.start();
    const t0 = performance.now();
    while (client.status !== "ready" && performance.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 50));
    expect(await l.consume(unique("k"), 10)).toEqual({ ok: true });
  });
});
