import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";

/** Outcome of one per-key check; `retryAfterSec` ≥ 1 when refused. */
export type LimitResult = { ok: true } | { ok: false; retryAfterSec: number };

/**
 * Per-key fixed-window limiter (60 s): in-process by default, Redis when several API instances
 * share keys (rate-limiter-flexible). One limiter per distinct per-key limit.
 * `consume` throws when Redis is unreachable (callers answer 503).
 */
export class KeyRateLimiter {
  private readonly limiters = new Map<number, RateLimiterAbstract>();
  constructor(private readonly redis?: unknown) {}

  private limiterFor(points: number): RateLimiterAbstract {
    let l = this.limiters.get(points);
    if (!l) {
      l = this.redis
        ? new RateLimiterRedis({ storeClient: this.redis, points, duration: 60, keyPrefix: `ballast_key_${points}`, useRedisPackage: false })
        : new RateLimiterMemory({ points, duration: 60 });
      this.limiters.set(points, l);
    }
    return l;
  }

  async consume(keyId: string, limitPerMinute: number): Promise<LimitResult> {
    try {
      await this.limiterFor(limitPerMinute).consume(keyId, 1);
      return { ok: true };
    } catch (err) {
      if (err instanceof RateLimiterRes) return { ok: false, retryAfterSec: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) };
      throw err;
    }
  }
}
