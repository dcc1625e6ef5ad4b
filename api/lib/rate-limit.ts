import type { Redis } from "ioredis";
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  RLWrapperTimeouts,
  type RateLimiterAbstract,
} from "rate-limiter-flexible";
import { apiLog, errorMessage } from "./log.ts";

/** Outcome of one check; `retryAfterSec` (seconds, ≥ 1) when refused. */
export type LimitResult = { ok: true } | { ok: false; retryAfterSec: number };

/** Default deadline (ms) of one Redis-backed check and of one Redis command. */
export const DEFAULT_LIMITER_TIMEOUT_MS = 300;

/**
 * The shared limiter (Redis) did not answer within the deadline or is unreachable. Callers answer
 * 503 `Public API temporarily unavailable` (or fall back to a local limiter where the spec allows).
 * `cause` holds the underlying error.
 */
export class RateLimiterUnavailableError extends Error {
  override readonly name = "RateLimiterUnavailableError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Options of `KeyRateLimiter`. */
export interface KeyRateLimiterOptions {
  /** Deadline of one Redis-backed `consume` (ms); default 300. Unused in-process. */
  timeoutMs?: number;
}

/**
 * Fixed-window limiter (60 s) over arbitrary buckets: in-process by default, Redis when several API
 * instances share budgets (rate-limiter-flexible). One limiter per distinct points value; buckets
 * are free-form strings, so one instance serves per-key limits (bucket = key id) and e.g. a per-IP
 * budget of failed key attempts (bucket `authfail:<ip>`).
 *
 * With Redis every `consume` runs under a deadline (`RLWrapperTimeouts`, default 300 ms); with the
 * client of `openRedis` (no offline queue) it fails at once while disconnected, so a paused or
 * stopped Redis costs at most the deadline.
 */
export class KeyRateLimiter {
  private readonly limiters = new Map<number | string, RateLimiterAbstract>();
  private readonly timeoutMs: number;

  /** `redis`: an ioredis client (see `openRedis`); in-process limits when undefined. */
  constructor(
    private readonly redis?: unknown,
    opts: KeyRateLimiterOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_LIMITER_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new RangeError(`KeyRateLimiter timeoutMs must be > 0 (got ${this.timeoutMs})`);
  }

  /** Whether budgets are shared through Redis (false: in-process, `consume` never throws). */
  get shared(): boolean {
    return this.redis !== undefined;
  }

  private limiterFor(points: number, durationSec = 60): RateLimiterAbstract {
    const id = durationSec === 60 ? points : `${points}/${durationSec}`;
    let l = this.limiters.get(id);
    if (!l) {
      l = this.redis
        ? new RLWrapperTimeouts({
            limiter: new RateLimiterRedis({
              storeClient: this.redis,
              points,
              duration: durationSec,
              keyPrefix: durationSec === 60 ? `ballast_key_${points}` : `ballast_${points}_per_${durationSec}s`,
              useRedisPackage: false,
            }),
            timeoutMs: this.timeoutMs,
          })
        : new RateLimiterMemory({ points, duration: durationSec });
      this.limiters.set(id, l);
    }
    return l;
  }

  /**
   * Takes one point from `bucketKey`'s budget of `pointsPerMinute` per window of `windowSec` seconds
   * (default 60; feedback uses 3 per 600 s). Returns `{ ok: true }`, or `{ ok: false, retryAfterSec }`
   * when the budget is spent.
   * @throws RangeError when `pointsPerMinute` is not a positive integer.
   * @throws RateLimiterUnavailableError when Redis does not answer within the deadline or is down.
   */
  async consume(bucketKey: string, pointsPerMinute: number, windowSec = 60): Promise<LimitResult> {
    if (!Number.isInteger(pointsPerMinute) || pointsPerMinute < 1)
      throw new RangeError(`pointsPerMinute must be a positive integer (got ${pointsPerMinute})`);
    try {
      await this.limiterFor(pointsPerMinute, windowSec).consume(bucketKey, 1);
      return { ok: true };
    } catch (err) {
      if (err instanceof RateLimiterRes) return refused(err);
      throw new RateLimiterUnavailableError(`rate limiter unavailable: ${errorMessage(err)}`, { cause: err });
    }
  }

  /**
   * `bucketKey`'s budget without taking a point: `{ ok: false, retryAfterSec }` once it is spent.
   * @throws RateLimiterUnavailableError as `consume`.
   */
  async peek(bucketKey: string, pointsPerMinute: number): Promise<LimitResult> {
    try {
      const r = await this.limiterFor(pointsPerMinute).get(bucketKey);
      return r && r.consumedPoints >= pointsPerMinute ? refused(r) : { ok: true };
    } catch (err) {
      throw new RateLimiterUnavailableError(`rate limiter unavailable: ${errorMessage(err)}`, { cause: err });
    }
  }
}

const refused = (r: RateLimiterRes): LimitResult => ({
  ok: false,
  retryAfterSec: Math.max(1, Math.ceil(r.msBeforeNext / 1000)),
});

/**
 * Opens the ioredis client of the shared limiter with fail-fast settings: no offline queue (commands
 * while disconnected reject at once), one retry per request, `commandTimeout` = `timeoutMs`
 * (default 300 ms), 1 s connect timeout, reconnect every ≤ 1 s. `error` events are logged as JSON
 * lines on stderr (once per distinct message until the next `ready`) and never crash the process.
 * Waits up to `readyWaitMs` (default 1000 ms) for the first connection so the first requests do not
 * fail; a Redis that is down at start is not an error (the client keeps reconnecting).
 */
export async function openRedis(url: string, opts: { timeoutMs?: number; readyWaitMs?: number } = {}): Promise<Redis> {
  const { Redis } = await import("ioredis");
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: opts.timeoutMs ?? DEFAULT_LIMITER_TIMEOUT_MS,
    connectTimeout: 1000,
    retryStrategy: (times) => Math.min(times * 100, 1000),
  });
  let lastLogged: string | null = null;
  redis.on("error", (err) => {
    const msg = errorMessage(err);
    if (msg === lastLogged) return;
    lastLogged = msg;
    apiLog("warn", "rate-limit", "Redis connection error; the shared limiter is unavailable until it reconnects", {
      error: msg,
    });
  });
  redis.on("ready", () => {
    if (lastLogged !== null) apiLog("info", "rate-limit", "Redis available again");
    lastLogged = null;
  });
  if (redis.status !== "ready") {
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, opts.readyWaitMs ?? 1000);
      function done() {
        clearTimeout(t);
        redis.off("ready", done);
        resolve();
      }
      redis.once("ready", done);
    });
  }
  return redis;
}
