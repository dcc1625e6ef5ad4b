import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";

const redis = new Redis("redis://127.0.0.1:6379", { maxRetriesPerRequest: 1 });
afterAll(() => redis.disconnect());

describe("shared rate limiter on a real Redis", () => {
  it("two API instances share one per-key budget", async () => {
    const a = new KeyRateLimiter(redis);
    const b = new KeyRateLimiter(redis);
    const key = `k-${process.pid}-${Date.now()}`;
    expect(await a.consume(key, 3)).toEqual({ ok: true });
    expect(await b.consume(key, 3)).toEqual({ ok: true });
    expect(await a.consume(key, 3)).toEqual({ ok: true });
    const refused = await b.consume(key, 3);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.retryAfterSec).toBeGreaterThanOrEqual(1);
  });
});
