import { describe, expect, it } from "vitest";
import {
  FAILED_KEY_ATTEMPTS_PER_MINUTE,
  LaneAuth,
  type AuthRequest,
  type Lane,
  TOO_MANY_INVALID_KEYS,
} from "./auth.ts";
import { HttpError } from "./http-error.ts";
import type { ApiKeyRecord, KeyAuthResult, KeyStore } from "./key-store.ts";
import { KeyRateLimiter, RateLimiterUnavailableError } from "./rate-limit.ts";

const record = (id: string, rateLimitPerMinute: number, tier = "standard"): ApiKeyRecord => ({
  id,
  keyPrefix: id,
  name: id,
  tier,
  rateLimitPerMinute,
  isActive: true,
  expiresAt: null,
});

/** A key store answering from a table of tokens; `down` makes every lookup unavailable; `inMemory` tokens are cachedRecord hits. */
function fakeKeys(table: Record<string, ApiKeyRecord>, opts: { down?: boolean; inMemory?: string[] } = {}) {
  return {
    liveInstances: 1,
    async authenticate(token: string): Promise<KeyAuthResult> {
      if (opts.down) return { kind: "unavailable" };
      const r = table[token];
      return r ? { kind: "valid", record: r, seen: true, source: "store" } : { kind: "invalid" };
    },
    cachedRecord: (token: string) => (opts.inMemory?.includes(token) ? table[token] : undefined),
  } as unknown as KeyStore;
}

/** A shared (Redis-like) limiter that admits while `up.ok` and throws RateLimiterUnavailableError otherwise. */
function flakySharedLimiter(up: { ok: boolean }) {
  return {
    shared: true,
    consumeSync: () => undefined,
    async consume() {
      if (!up.ok) throw new RateLimiterUnavailableError("down");
      return { ok: true as const };
    },
  } as unknown as KeyRateLimiter;
}

const req = (headers: Record<string, string>, ip = "198.51.100.7", cacheableGet = true): AuthRequest => ({
  header: (n) => headers[n],
  ip,
  cacheableGet,
});

/** Status, message and Retry-After of what `admit` threw, or 200 when it admitted. */
async function outcome(auth: LaneAuth, lane: Lane, r: AuthRequest) {
  try {
    await auth.admit(lane, r);
    return { status: 200 };
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    return { status: err.status, error: err.message, retryAfter: err.headers["Retry-After"] };
  }
}

describe("LaneAuth: one decision per lane", () => {
  const keys = fakeKeys({ good: record("k1", 2) });
  const auth = new LaneAuth({
    keys,
    limiter: new KeyRateLimiter(),
    nowMs: Date.now,
    siteProxySecret: "site-secret-0123456789",
    siteProxySecretPrevious: "old-site-secret-012345",
    webhookSecret: "hook-secret",
  });

  it("public, signed-wallet and init-data admit without any header; admin is 404 whatever is sent", async () => {
    for (const lane of ["public", "signed-wallet", "init-data"] as const)
      expect(await outcome(auth, lane, req({}))).toEqual({ status: 200 });
    expect((await outcome(auth, "admin", req({ "X-API-Key": "good" }))).status).toBe(404);
  });

  it("apiKey: 401 without a key, then the key's own limit (429 Rate limit exceeded with Retry-After)", async () => {
    expect(await outcome(auth, "apiKey", req({}))).toMatchObject({
      status: 401,
      error: "Unauthorized: valid X-API-Key required. /api/health is free.",
    });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await outcome(auth, "apiKey", req({ "X-API-Key": "good" })));
    expect(statuses.map((s) => s.status)).toEqual([200, 200, 429]);
    expect(statuses[2]).toMatchObject({ error: "Rate limit exceeded", retryAfter: expect.stringMatching(/^\d+$/) });
  });

  it("site and webhook: the secret in constant time (the previous site secret too), 401 when wrong, 404 when the lane has none", async () => {
    const site = (s: string) => outcome(auth, "site", req({ "X-Ballast-Site-Proxy-Secret": s }));
    expect((await site("site-secret-0123456789")).status).toBe(200);
    expect((await site("old-site-secret-012345")).status).toBe(200);
    expect(await site("site-secret-012345678X")).toMatchObject({ status: 401, error: "Unauthorized" });
    expect((await outcome(auth, "webhook", req({ "X-Telegram-Bot-Api-Secret-Token": "hook-secret" }))).status).toBe(
      200,
    );
    expect((await outcome(auth, "webhook", req({ "X-Telegram-Bot-Api-Secret-Token": "nope" }))).status).toBe(401);
    const bare = new LaneAuth({ keys, limiter: new KeyRateLimiter(), nowMs: Date.now });
    expect((await outcome(bare, "site", req({ "X-Ballast-Site-Proxy-Secret": "anything" }))).status).toBe(404);
    expect((await outcome(bare, "webhook", req({ "X-Telegram-Bot-Api-Secret-Token": "hook-secret" }))).status).toBe(
      404,
    );
  });

  it("invalid keys are limited per client IP on the failure path only; a valid key from that IP keeps its own quota", async () => {
    const a = new LaneAuth({
      keys: fakeKeys({ good: record("k2", 100) }),
      limiter: new KeyRateLimiter(),
      nowMs: Date.now,
    });
    const ip = "203.0.113.9";
    for (let i = 0; i < FAILED_KEY_ATTEMPTS_PER_MINUTE; i++)
      expect((await outcome(a, "apiKey", req({ "X-API-Key": `bad${i}` }, ip))).status).toBe(401);
    expect(await outcome(a, "apiKey", req({ "X-API-Key": "bad-again" }, ip))).toMatchObject({
      status: 429,
      error: TOO_MANY_INVALID_KEYS,
      retryAfter: expect.stringMatching(/^\d+$/),
    });
    expect((await outcome(a, "apiKey", req({ "X-API-Key": "bad-again" }, "203.0.113.10"))).status).toBe(401);
    expect((await outcome(a, "apiKey", req({ "X-API-Key": "good" }, ip))).status).toBe(200);
  });

  it("a key store that cannot answer is 503 Public API temporarily unavailable with Retry-After: 60", async () => {
    const a = new LaneAuth({ keys: fakeKeys({}, { down: true }), limiter: new KeyRateLimiter(), nowMs: Date.now });
    expect(await outcome(a, "apiKey", req({ "X-API-Key": "good" }))).toEqual({
      status: 503,
      error: "Public API temporarily unavailable",
      retryAfter: "60",
    });
  });
});

describe("LaneAuth with the shared limiter down (spec 5.5, reference 4.3)", () => {
  it("only a standard key the shared limiter admitted before falls back to a local budget of min(limit, 30), on cacheable GETs", async () => {
    const up = { ok: true };
    const table = { std: record("s", 100), fresh: record("f", 100), donor: record("d", 10, "donor") };
    const auth = new LaneAuth({ keys: fakeKeys(table), limiter: flakySharedLimiter(up), nowMs: Date.now });
    expect((await outcome(auth, "apiKey", req({ "X-API-Key": "std" }))).status).toBe(200);
    expect((await outcome(auth, "apiKey", req({ "X-API-Key": "donor" }))).status).toBe(200);
    up.ok = false;
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await outcome(auth, "apiKey", req({ "X-API-Key": "std" }))).status);
    expect(statuses).toEqual([...Array(30).fill(200), 429]);
    // never admitted by the shared limiter here, another tier, or not a cacheable GET: fail closed
    expect((await outcome(auth, "apiKey", req({ "X-API-Key": "fresh" }))).status).toBe(503);
    expect((await outcome(auth, "apiKey", req({ "X-API-Key": "donor" }))).status).toBe(503);
    const post = await outcome(auth, "apiKey", req({ "X-API-Key": "std" }, "198.51.100.7", false));
    expect(post).toMatchObject({ status: 503, retryAfter: "60" });
  });
});

describe("LaneAuth.admitCachedKey (the fast path's lane decision without I/O)", () => {
  it("admits a key held in memory against the in-process limit and throws its 429; anything else is left to admit", () => {
    const auth = new LaneAuth({
      keys: fakeKeys({ hot: record("h", 2), cold: record("c", 2) }, { inMemory: ["hot"] }),
      limiter: new KeyRateLimiter(),
      nowMs: Date.now,
    });
    expect(auth.admitCachedKey(undefined)).toBe(false);
    expect(auth.admitCachedKey("cold")).toBe(false);
    expect(auth.admitCachedKey("hot")).toBe(true);
    expect(auth.admitCachedKey("hot")).toBe(true);
    expect(() => auth.admitCachedKey("hot")).toThrow(expect.objectContaining({ status: 429 }));
    const shared = new LaneAuth({
      keys: fakeKeys({ hot: record("h", 2) }, { inMemory: ["hot"] }),
      limiter: flakySharedLimiter({ ok: true }),
      nowMs: Date.now,
    });
    expect(shared.admitCachedKey("hot")).toBe(false);
  });
});
