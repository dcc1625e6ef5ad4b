import { timingSafeEqual } from "node:crypto";
import { HttpError } from "./http-error.ts";
import type { ApiKeyRecord, KeyStore } from "./key-store.ts";
import { KeyRateLimiter, type LimitResult } from "./rate-limit.ts";

/**
 * The lane a route is served on (spec 1, 5):
 * - `public`: no key (health, the exempt reads of spec 5.2, static files, feedback).
 * - `apiKey`: `X-API-Key` verified against the state store, per-key limit (spec 5.1, 8).
 * - `site`: the website-internal lane, header `X-Ballast-Site-Proxy-Secret` (spec 5.7).
 * - `signed-wallet`: SIWE-signed donor claims, limited per client IP before the body is read (spec 5.3).
 * - `webhook`: the messaging platform's inbound calls, header `X-Telegram-Bot-Api-Secret-Token`.
 * - `admin`: operator routes; never reachable on the public host (404 before key auth, spec 5.2).
 */
export type Lane = "public" | "apiKey" | "site" | "signed-wallet" | "webhook" | "admin";

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
const UNAVAILABLE = () => new HttpError(503, "Public API temporarily unavailable", { "Retry-After": "60" });
const NOT_FOUND = () => new HttpError(404, "Not found");

/** A verified key is reused without a store lookup for this long (ms); deactivation takes effect within it. */
export const KEY_FRESH_MS = 5_000;
/** During a store outage, a standard key verified within this window (ms) still serves cacheable GETs (spec 5.5). */
export const KEY_OUTAGE_GRACE_MS = 10 * 60_000;
/** Bounded number of verified keys kept per instance. */
export const KEY_CACHE_MAX = 4096;
/** Failed key attempts admitted per client IP per 60 s; past it, 429 before any store lookup. */
export const FAILED_KEY_ATTEMPTS_PER_MINUTE = 30;
/** Donor-claim attempts per client IP per 60 s (spec 5.3). */
export const CLAIM_ATTEMPTS_PER_MINUTE = 10;

/**
 * The lane checks of one process: an exhaustive switch over {@link Lane}. Keeps spec 5.5's bounded
 * cache of recently verified keys and its local limiter, and the per-IP limiters of failed key
 * attempts and donor claims (in-process: they guard the state store, so they must not depend on it).
 */
export class LaneAuth {
  private readonly verified = new Map<string, { record: ApiKeyRecord; at: number }>();
  /** In-process budgets: per-IP attempts, and per-key limits while the shared limiter is down. */
  private readonly local = new KeyRateLimiter();

  constructor(private readonly deps: AuthDeps) {}

  /**
   * Admits a request to `lane` or throws the HttpError the spec names: 401 (no or invalid key, wrong
   * lane secret), 404 (admin on the public host; a lane without its configured secret), 429 (per-key
   * limit, failed attempts or claims per IP; `Retry-After`), 503 `Public API temporarily unavailable`
   * with `Retry-After: 60` (state store or limiter unavailable and no cached verification applies).
   */
  async admit(lane: Lane, req: AuthRequest): Promise<void> {
    switch (lane) {
      case "public":
        return;
      case "apiKey":
        return this.apiKey(req);
      case "site":
        return requireSecret(this.deps.siteProxySecret, req.header(SITE_PROXY_HEADER), this.deps.siteProxySecretPrevious);
      case "signed-wallet":
        return orTooMany(await this.local.consume(`claim:${req.ip}`, CLAIM_ATTEMPTS_PER_MINUTE));
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

  private async apiKey(req: AuthRequest): Promise<void> {
    const token = req.header("X-API-Key");
    if (!token) throw new HttpError(401, UNAUTHORIZED);
    const now = this.deps.nowMs();
    const cached = this.verified.get(token);
    let record: ApiKeyRecord;
    let fromOutageCache = false;
    if (cached && now - cached.at <= KEY_FRESH_MS) {
      record = cached.record;
    } else {
      orTooMany(await this.local.peek(`authfail:${req.ip}`, FAILED_KEY_ATTEMPTS_PER_MINUTE));
      let found: ApiKeyRecord | null;
      try {
        found = await this.deps.keys.verify(token, Math.floor(now / 1000));
      } catch {
        // Spec 5.5: recently verified standard keys keep serving cacheable GETs; others fail closed.
        if (!cached || !req.cacheableGet || cached.record.tier !== "standard" || now - cached.at > KEY_OUTAGE_GRACE_MS) throw UNAVAILABLE();
        found = cached.record;
        fromOutageCache = true;
      }
      if (!found) {
        this.verified.delete(token);
        orTooMany(await this.local.consume(`authfail:${req.ip}`, FAILED_KEY_ATTEMPTS_PER_MINUTE));
        throw new HttpError(401, UNAUTHORIZED);
      }
      record = found;
      if (!fromOutageCache) this.remember(token, record, now);
    }
    let res: LimitResult;
    try {
      res = await this.deps.limiter.consume(record.id, record.rateLimitPerMinute);
    } catch {
      if (!req.cacheableGet || record.tier !== "standard") throw UNAVAILABLE();
      res = await this.local.consume(record.id, record.rateLimitPerMinute);
    }
    orTooMany(res);
  }

  /** Drops cached verifications of key `keyId` (rotated, deactivated or updated by an operator in this process). */
  forget(keyId: string): void {
    for (const [token, v] of this.verified) if (v.record.id === keyId) this.verified.delete(token);
  }

  private remember(token: string, record: ApiKeyRecord, now: number): void {
    this.verified.delete(token);
    if (this.verified.size >= KEY_CACHE_MAX) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { record, at: now });
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
