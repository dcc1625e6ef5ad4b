import { timingSafeEqual } from "node:crypto";
import { HttpError } from "./http-error.ts";
import { KEY_CACHE_MAX, KEY_OUTAGE_GRACE_MS, type KeyStore } from "./key-store.ts";
import { KeyRateLimiter, type LimitResult } from "./rate-limit.ts";
import { dropOldest } from "./bounded-map.ts";

/**
 * The lane a route is served on (spec 1, 5):
 * - `public`: no key (health, the exempt reads of spec 5.2, static files, feedback).
 * - `apiKey`: `X-API-Key` verified against the state store, per-key limit (spec 5.1, 8).
 * - `site`: the website-internal lane, header `X-Ballast-Site-Proxy-Secret` (spec 5.7).
 * - `signed-wallet`: SIWE-signed donor claims; the handler applies the closed switch, then the per-IP
 *   limit before the body is read, then the signature (spec 5.3), so the lane itself admits.
 * - `webhook`: the messaging platform's inbound calls, header `X-Telegram-Bot-Api-Secret-Token`.
 * - `init-data`: the mini-app's calls, authenticated by the signed init data in the body (the handler
 *   validates it before any state write; refused when it comes through the website-internal lane).
 * - `admin`: operator routes; never reachable on the public host (404 before key auth, spec 5.2).
 */
export type Lane = "public" | "apiKey" | "site" | "signed-wallet" | "webhook" | "init-data" | "admin";

/** What a request presents to the lane check. */
export interface AuthRequest {
  header(name: string): string | undefined;
  /** Client IP (socket address; the server is the edge). */
  ip: string;
  /** A cacheable GET: spec 5.5's local verification cache may answer during a store outage. */
  cacheableGet: boolean;
}

/** Dependencies and settings of the lane checks. */
export interface AuthDeps {
  keys: KeyStore;
  limiter: KeyRateLimiter;
  /** Wall clock, ms. */
  nowMs: () => number;
  /** Secrets of the site and webhook lanes; a lane without its secret is not served (404). */
  siteProxySecret?: string;
  /** The site secret being rotated out: accepted beside `siteProxySecret` until it is unset. */
  siteProxySecretPrevious?: string;
  webhookSecret?: string;
}

const UNAUTHORIZED = "Unauthorized: valid X-API-Key required. /api/health is free.";
/** Message of the per-IP limit of invalid keys (never the per-key limit's message). */
export const TOO_MANY_INVALID_KEYS = "Too many invalid API keys from this address";
const UNAVAILABLE = () => new HttpError(503, "Public API temporarily unavailable", { "Retry-After": "60" });
const NOT_FOUND = () => new HttpError(404, "Not found");

/** Invalid key attempts admitted per client IP per 60 s; the next one answers 429 `TOO_MANY_INVALID_KEYS`. Valid keys never count. */
export const FAILED_KEY_ATTEMPTS_PER_MINUTE = 30;
/** Cap of a key's per-instance limit while the shared limiter is down (reference 4.3: min(limit, 30)). */
export const LOCAL_FALLBACK_MAX_PER_MINUTE = 30;

/**
 * The lane checks of one process: an exhaustive switch over {@link Lane}. Key verification, the
 * spec 5.5 cache of verified keys and its fail-closed rules live in `KeyStore.authenticate`; this
 * class applies the per-key limit (shared limiter; a bounded local fallback only for standard keys
 * already verified here, on cacheable GETs) and the per-IP limit of invalid keys (failure path only).
 */
export class LaneAuth {
  /** In-process budgets: invalid keys per IP and per-key limits while the shared limiter is down. */
  private readonly local = new KeyRateLimiter();
  /** Key id → last time (app clock, ms) the shared limiter admitted it: "seen" for the limiter fallback. Bounded. */
  private readonly sharedOk = new Map<string, number>();

  constructor(private readonly deps: AuthDeps) {}

  /**
   * Admits a request to `lane` or throws the HttpError the spec names: 401 (no or invalid key, wrong
   * lane secret), 404 (admin on the public host; a lane without its configured secret), 429 (per-key
   * limit `Rate limit exceeded`; invalid keys per IP `Too many invalid API keys from this address`;
   * both with `Retry-After`), 503 `Public API temporarily unavailable` with
   * `Retry-After: 60` (state store or limiter unavailable and no cached verification applies).
   */
  async admit(lane: Lane, req: AuthRequest): Promise<void> {
    switch (lane) {
      case "public":
      case "signed-wallet":
      case "init-data":
        return;
      case "apiKey":
        return this.apiKey(req);
      case "site":
        return requireSecret(
          this.deps.siteProxySecret,
          req.header(SITE_PROXY_HEADER),
          this.deps.siteProxySecretPrevious,
        );
      case "webhook":
        return requireSecret(this.deps.webhookSecret, req.header("X-Telegram-Bot-Api-Secret-Token"));
      case "admin":
        throw NOT_FOUND();
      default: {
        const never: never = lane;
        throw new Error(`unknown lane ${String(never)}`);
      }
    }
  }

  /**
   * The `apiKey` lane answered without I/O when it can be: true when `token` is a key verified here
   * before (KeyStore.cachedRecord) and the in-process limiter admits it; throws the 429 of a spent
   * budget. False when the answer needs `admit` (no or unknown token, a key not in memory, a shared
   * limiter); nothing was counted then. `nowMs`: the app clock's reading for this request (read here when absent).
   */
  admitCachedKey(token: string | undefined, nowMs = this.deps.nowMs()): boolean {
    if (!token || this.deps.limiter.shared) return false;
    const record = this.deps.keys.cachedRecord(token, nowMs);
    const res = record && this.deps.limiter.consumeSync(record.id, record.rateLimitPerMinute);
    if (!res) return false;
    orTooMany(res);
    return true;
  }

  private async apiKey(req: AuthRequest): Promise<void> {
    const token = req.header("X-API-Key");
    if (!token) throw new HttpError(401, UNAUTHORIZED);
    const auth = await this.deps.keys.authenticate(token, this.deps.nowMs(), req.cacheableGet);
    if (auth.kind === "unavailable") throw UNAVAILABLE();
    if (auth.kind === "invalid") return this.invalidKey(req.ip);
    const { record } = auth;
    let res: LimitResult;
    try {
      res = await this.deps.limiter.consume(record.id, record.rateLimitPerMinute);
      if (this.deps.limiter.shared) this.noteSharedOk(record.id);
    } catch {
      // Spec 5.5 / reference 4.3: only a standard key that this instance verified and the shared
      // limiter admitted before the outage (within the outage grace) may fall back to a local
      // limiter, for a cacheable GET: its share of the limit across live instances, at most 30 per
      // minute. Donor and self-serve keys and keys never seen here fail closed.
      const okAt = this.sharedOk.get(record.id);
      if (
        !req.cacheableGet ||
        record.tier !== "standard" ||
        !auth.seen ||
        okAt === undefined ||
        this.deps.nowMs() - okAt > KEY_OUTAGE_GRACE_MS
      )
        throw UNAVAILABLE();
      const share = Math.floor(record.rateLimitPerMinute / Math.max(1, this.deps.keys.liveInstances));
      res = await this.local.consume(record.id, Math.max(1, Math.min(LOCAL_FALLBACK_MAX_PER_MINUTE, share)));
    }
    orTooMany(res);
  }

  private noteSharedOk(id: string): void {
    this.sharedOk.delete(id);
    if (this.sharedOk.size >= KEY_CACHE_MAX) dropOldest(this.sharedOk);
    this.sharedOk.set(id, this.deps.nowMs());
  }

  /**
   * The failure path: counts one invalid key against the client IP (shared limiter when it answers,
   * else this process's) and answers 401, or 429 `TOO_MANY_INVALID_KEYS` once the IP spent its budget.
   */
  private async invalidKey(ip: string): Promise<never> {
    const bucket = `authfail:${ip}`;
    let res: LimitResult;
    try {
      res = await this.deps.limiter.consume(bucket, FAILED_KEY_ATTEMPTS_PER_MINUTE);
    } catch {
      res = await this.local.consume(bucket, FAILED_KEY_ATTEMPTS_PER_MINUTE);
    }
    if (!res.ok) throw new HttpError(429, TOO_MANY_INVALID_KEYS, { "Retry-After": String(res.retryAfterSec) });
    throw new HttpError(401, UNAUTHORIZED);
  }
}

/** Header of the website-internal lane (spec 5.7). */
export const SITE_PROXY_HEADER = "X-Ballast-Site-Proxy-Secret";

/** 404 when the lane has no configured secret (not served here), 401 on a missing or wrong one (constant time; `previous` also accepted). */
function requireSecret(expected: string | undefined, given: string | undefined, previous?: string): void {
  if (!expected) throw NOT_FOUND();
  const b = Buffer.from(given ?? "");
  const same = (secret: string) => {
    const a = Buffer.from(secret);
    return a.length === b.length && timingSafeEqual(a, b);
  };
  if (!same(expected) && !(previous && same(previous))) throw new HttpError(401, "Unauthorized");
}

/** 429 with `Retry-After` when a budget is spent. */
function orTooMany(res: LimitResult): void {
  if (!res.ok) throw new HttpError(429, "Rate limit exceeded", { "Retry-After": String(res.retryAfterSec) });
}
