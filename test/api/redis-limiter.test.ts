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

  /**
   * One consume that must fail; returns the error and the message of its cause. Speed claims (the
   * deadline's 300 ms, "at once" when stopped) are measured by `make bench` (scripts/bench/fault-latency.ts):
   * here the mechanism is asserted (which error, which cause); the test timeout is the liveness bound.
   */
  const failure = async (l: KeyRateLimiter) => {
    const err = await l.consume(unique("k"), 10).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RateLimiterUnavailableError);
    const cause = (err as RateLimiterUnavailableError).cause;
    return { err, cause: cause instanceof Error ? cause.message : String(cause) };
  };

  it("throws RateLimiterUnavailableError by its deadline while Redis is paused, then recovers", async () => {
    const l = new KeyRateLimiter(client, { timeoutMs: 300 });
    expect(await l.consume(unique("k"), 10)).toEqual({ ok: true });
    const ctl = new Redis(own.url);
    // Paused for 3 s, ten times the deadline: without the deadline the call would wait for the pause
    // to end and succeed.
    await ctl.call("CLIENT", "PAUSE", "3000", "ALL");
    const { cause } = await failure(l);
    // The deadline fired (the limiter wrapper's "Operation timed out" or ioredis' commandTimeout
    // "Command timed out", both 300 ms here), not a connection error.
    expect(cause).toMatch(/timed out/i);
    ctl.disconnect();
    // Recovers once the pause ends (polled: the end of a pause is not timed here).
    let res = await l.consume(unique("k"), 10).catch(() => null);
    for (let i = 0; res === null && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await l.consume(unique("k"), 10).catch(() => null);
    }
    expect(res).toEqual({ ok: true });
  });

  it("fails at once while Redis is stopped (no deadline wait), and works again after a restart", async () => {
    const l = new KeyRateLimiter(client, { timeoutMs: 300 });
    await own.stop();
    const { cause } = await failure(l);
    // Without the offline queue a command on a closed connection is rejected by the client itself,
    // not by the 300 ms deadline: the cause is a connection error, never a timeout.
    expect(cause).not.toMatch(/timed out/i);
    expect(cause).toMatch(/offline queue|closed|writeable|connect/i);
    await own.start();
    const t0 = performance.now();
    while (client.status !== "ready" && performance.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 50));
    expect(await l.consume(unique("k"), 10)).toEqual({ ok: true });
  });
});
