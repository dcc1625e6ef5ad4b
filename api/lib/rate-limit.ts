import type { Redis } from "ioredis";
import { RateLimiterRedis, RateLimiterRes, RLWrapperTimeouts, type RateLimiterAbstract } from "rate-limiter-flexible";
import { type DependencyReason, dependencyReason } from "./dependency-reason.ts";
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

/**
 * The limiter's store as this process sees it (health `limiterStore`): `backend` `redis` (shared
 * budgets) or `memory` (in-process, always `ok`); `state` `unavailable` from a failed Redis call or
 * connection error until a call or the connection succeeds again; `since` Unix s (wall clock) when
 * the current state began (null before the first Redis outcome); `reason` a generic word while
 * unavailable (DependencyReason), never a driver message.
 */
export interface LimiterStoreHealth {
  state: "ok" | "unavailable";
  backend: "redis" | "memory";
  since: number | null;
  reason: DependencyReason | null;
}

/** While the store is unavailable, a `status()` call probes it in the background at most this often (ms). */
const PROBE_EVERY_MS = 5000;

/** Options of `KeyRateLimiter`. */
export interface KeyRateLimiterOptions {
  /** Deadline of one Redis-backed `consume` (ms); default 300. Unused in-process. */
  timeoutMs?: number;
}

const OK: LimitResult = Object.freeze({ ok: true });

/**
 * Fixed windows of one budget (`points` per `durationMs`) in this process, answered synchronously:
 * a bucket's window opens at its first point and lasts `durationMs`; every point counts, and one
 * past the budget is refused until the window closes (rate-limiter-flexible's RateLimiterMemory
 * semantics, whose windows these replace). Closed windows are dropped by a sweep at most once per
 * window length, so memory holds the buckets seen within about two windows.
 */
class LocalWindows {
  private readonly windows = new Map<string, { points: number; closesAt: number }>();
  private sweepAt = 0;

  constructor(
    private readonly budget: number,
    private readonly durationMs: number,
  ) {}

  /** Takes one point from `bucket` at `nowMs` (wall clock, ms). */
  consume(bucket: string, nowMs: number): LimitResult {
    let w = this.windows.get(bucket);
    if (!w || w.closesAt <= nowMs) {
      if (nowMs >= this.sweepAt) this.sweep(nowMs);
      w = { points: 0, closesAt: nowMs + this.durationMs };
      this.windows.set(bucket, w);
    }
    w.points++;
    return w.points > this.budget ? { ok: false, retryAfterSec: retryAfter(w.closesAt - nowMs) } : OK;
  }

  /** `bucket`'s state at `nowMs` without taking a point: refused once the budget is spent. */
  peek(bucket: string, nowMs: number): LimitResult {
    const w = this.windows.get(bucket);
    return w && w.closesAt > nowMs && w.points >= this.budget
      ? { ok: false, retryAfterSec: retryAfter(w.closesAt - nowMs) }
      : OK;
  }

  private sweep(nowMs: number): void {
    for (const [bucket, w] of this.windows) if (w.closesAt <= nowMs) this.windows.delete(bucket);
    this.sweepAt = nowMs + this.durationMs;
  }
}

/** Seconds until a window closes, as `Retry-After` (≥ 1). */
const retryAfter = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * Fixed-window limiter (60 s) over arbitrary buckets: in-process by default, Redis when several API
 * instances share budgets (rate-limiter-flexible). One limiter per distinct points value; buckets
 * are free-form strings, so one instance serves per-key limits (bucket = key id) and e.g. a per-IP
 * budget of failed key attempts (bucket `authfail:<ip>`). In-process budgets are also answered
 * synchronously (`consumeSync`), for the Node fast path.
 *
 * With Redis every `consume` runs under a deadline (`RLWrapperTimeouts`, default 300 ms); with the
 * client of `openRedis` (no offline queue) it fails at once while disconnected, so a paused or
 * stopped Redis costs at most the deadline.
 */
export class KeyRateLimiter {
  private readonly limiters = new Map<number | string, RateLimiterAbstract>();
  private readonly local = new Map<number | string, LocalWindows>();
  private readonly timeoutMs: number;
  private store: Omit<LimiterStoreHealth, "backend"> = { state: "ok", since: null, reason: null };
  private probedAtMs = 0;

  /**
   * `redis`: an ioredis client (see `openRedis`); in-process limits when undefined. Its `error` and
   * `ready` events update `status()` too, so an outage shows without keyed traffic.
   */
  constructor(
    private readonly redis?: unknown,
    opts: KeyRateLimiterOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_LIMITER_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new RangeError(`KeyRateLimiter timeoutMs must be > 0 (got ${this.timeoutMs})`);
    const events = redis as { on?: (event: string, listener: (err?: unknown) => void) => unknown } | undefined;
    if (typeof events?.on === "function") {
      events.on("error", (err) => this.record(err));
      events.on("ready", () => this.record(null));
    }
  }

  /** The limiter store's state (health); while unavailable, also starts a background probe (at most every 5 s) so it heals without keyed traffic. */
  status(): LimiterStoreHealth {
    if (!this.redis) return { state: "ok", backend: "memory", since: null, reason: null };
    if (this.store.state === "unavailable" && Date.now() - this.probedAtMs >= PROBE_EVERY_MS) {
      this.probedAtMs = Date.now();
      this.limiterFor(1)
        .get("ballast_limiter_probe")
        .then(
          () => this.record(null),
          (err: unknown) => this.record(err),
        );
    }
    return { ...this.store, backend: "redis" };
  }

  /** Records the outcome of a Redis call or connection event: `null` success, else the failure. */
  private record(failure: unknown): void {
    const now = Math.floor(Date.now() / 1000);
    if (failure === null) {
      if (this.store.state !== "ok" || this.store.since === null)
        this.store = { state: "ok", since: now, reason: null };
    } else if (this.store.state !== "unavailable") {
      this.store = { state: "unavailable", since: now, reason: dependencyReason(failure) };
    } else this.store.reason = dependencyReason(failure);
  }

  /** Whether budgets are shared through Redis (false: in-process, `consume` never throws). */
  get shared(): boolean {
    return this.redis !== undefined;
  }

  private limiterFor(points: number, durationSec = 60): RateLimiterAbstract {
    const id = durationSec === 60 ? points : `${points}/${durationSec}`;
    let l = this.limiters.get(id);
    if (!l) {
      l = new RLWrapperTimeouts({
        limiter: new RateLimiterRedis({
          storeClient: this.redis,
          points,
          duration: durationSec,
          keyPrefix: durationSec === 60 ? `ballast_key_${points}` : `ballast_${points}_per_${durationSec}s`,
          useRedisPackage: false,
        }),
        timeoutMs: this.timeoutMs,
      });
      this.limiters.set(id, l);
    }
    return l;
  }

  private localFor(points: number, durationSec = 60): LocalWindows {
    const id = durationSec === 60 ? points : `${points}/${durationSec}`;
    let l = this.local.get(id);
    if (!l) {
      l = new LocalWindows(points, durationSec * 1000);
      this.local.set(id, l);
    }
    return l;
  }

  /**
   * `consume` answered synchronously when budgets are in-process; undefined when they are shared
   * through Redis (call `consume`).
   * @throws RangeError when `pointsPerMinute` is not a positive integer.
   */
  consumeSync(bucketKey: string, pointsPerMinute: number, windowSec = 60): LimitResult | undefined {
    if (!Number.isInteger(pointsPerMinute) || pointsPerMinute < 1)
      throw new RangeError(`pointsPerMinute must be a positive integer (got ${pointsPerMinute})`);
    return this.redis ? undefined : this.localFor(pointsPerMinute, windowSec).consume(bucketKey, Date.now());
  }

  /**
   * Takes one point from `bucketKey`'s budget of `pointsPerMinute` per window of `windowSec` seconds
   * (default 60; feedback uses 3 per 600 s). Returns `{ ok: true }`, or `{ ok: false, retryAfterSec }`
   * when the budget is spent.
   * @throws RangeError when `pointsPerMinute` is not a positive integer.
   * @throws RateLimiterUnavailableError when Redis does not answer within the deadline or is down.
   */
  async consume(bucketKey: string, pointsPerMinute: number, windowSec = 60): Promise<LimitResult> {
    const local = this.consumeSync(bucketKey, pointsPerMinute, windowSec);
    if (local) return local;
    try {
      await this.limiterFor(pointsPerMinute, windowSec).consume(bucketKey, 1);
      this.record(null);
      return { ok: true };
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        this.record(null);
        return refused(err);
      }
      this.record(err);
      throw new RateLimiterUnavailableError(`rate limiter unavailable: ${errorMessage(err)}`, { cause: err });
    }
  }

  /**
   * `bucketKey`'s budget without taking a point: `{ ok: false, retryAfterSec }` once it is spent.
   * @throws RateLimiterUnavailableError as `consume`.
   */
  async peek(bucketKey: string, pointsPerMinute: number): Promise<LimitResult> {
    if (!this.redis) return this.localFor(pointsPerMinute).peek(bucketKey, Date.now());
    try {
      const r = await this.limiterFor(pointsPerMinute).get(bucketKey);
      this.record(null);
      return r && r.consumedPoints >= pointsPerMinute ? refused(r) : { ok: true };
    } catch (err) {
      this.record(err);
      throw new RateLimiterUnavailableError(`rate limiter unavailable: ${errorMessage(err)}`, { cause: err });
    }
  }
}

const refused = (r: RateLimiterRes): LimitResult => ({ ok: false, retryAfterSec: retryAfter(r.msBeforeNext) });

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
