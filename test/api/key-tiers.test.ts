/**
 * Key tiers, pepper rotation, `update`, the spec 5.5 verification cache and its fail-closed rules,
 * the per-IP limit of invalid keys, the limiter fallback with Redis down, cache coherence across two
 * apps sharing one Postgres schema, and the reused development key — against the real Postgres
 * (a schema of this file's own) and a redis-server of this file's own.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import { FAILED_KEY_ATTEMPTS_PER_MINUTE, LaneAuth, TOO_MANY_INVALID_KEYS } from "../../api/lib/auth.ts";
import { HttpError } from "../../api/lib/http-error.ts";
import {
  DONOR_RATE_LIMIT_PER_MINUTE,
  KEY_OUTAGE_GRACE_MS,
  KeyInputError,
  type KeyStoreOptions,
  KeyStore,
  openSqlClient,
  type Peppers,
  SELF_SERVE_RATE_LIMIT_PER_MINUTE,
  SELF_SERVE_TTL_SEC,
  type SqlClient,
} from "../../api/lib/key-store.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter, openRedis } from "../../api/lib/rate-limit.ts";
import { devKeyPath } from "../../api/lib/dev-key.ts";
import { startServer } from "../../api/server.ts";
import { must } from "../helpers/must.ts";
import { createTestSchema, PG_URL } from "../helpers/pg-schema.ts";
import { OwnRedis } from "../helpers/redis-server.ts";

const PEPPER = "pepper-for-tier-tests-0123456789";
const APP = `ballast_tiers_${process.pid}`;
let schema: Awaited<ReturnType<typeof createTestSchema>>;
let admin: pg.Client;
const opened: SqlClient[] = [];
const stores: KeyStore[] = [];
const tmpDirs: string[] = [];

async function sqlClient(app = APP): Promise<SqlClient> {
  const sql = await openSqlClient({ databaseUrl: `${schema.url}&application_name=${app}`, pgliteDir: "" });
  opened.push(sql);
  return sql;
}

/** A key store on this file's schema (its own pool). */
async function store(opts: KeyStoreOptions & { pepper?: string | Peppers } = {}, sql?: SqlClient): Promise<KeyStore> {
  const k = new KeyStore(sql ?? (await sqlClient()), opts.pepper ?? PEPPER, opts);
  await k.init();
  stores.push(k);
  return k;
}

type Outcome = { status: number; error?: string; retryAfter?: string };

/** Runs the apiKey lane check; 200 when admitted. */
async function admit(
  auth: LaneAuth,
  token: string,
  opts: { ip?: string; cacheableGet?: boolean } = {},
): Promise<Outcome> {
  try {
    await auth.admit("apiKey", {
      header: (n) => (n === "X-API-Key" ? token : undefined),
      ip: opts.ip ?? "198.51.100.1",
      cacheableGet: opts.cacheableGet ?? true,
    });
    return { status: 200 };
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    return { status: err.status, error: err.message, retryAfter: err.headers["Retry-After"] };
  }
}

const times = async (n: number, f: () => Promise<Outcome>) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await f()).status);
  return out;
};
const nowS = () => Math.floor(Date.now() / 1000);
const bogus = (i: number) => `bl_live_${i.toString(16).padStart(16, "0")}_${"Z".repeat(32)}`;

beforeAll(async () => {
  schema = await createTestSchema("ballast_tiers");
  admin = new pg.Client({ connectionString: PG_URL, application_name: `${APP}_admin` });
  await admin.connect();
});
afterAll(async () => {
  for (const k of stores) await k.close().catch(() => undefined);
  for (const s of opened) await s.close().catch(() => undefined);
  await admin?.end();
  await schema?.drop();
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

describe("tiers (spec 5.3, 8)", () => {
  it("standard: 120/min by default, an override from 1 to 10000, nothing outside", async () => {
    const keys = await store();
    expect((await keys.create({ name: "std" })).record).toMatchObject({
      tier: "standard",
      rateLimitPerMinute: 120,
      expiresAt: null,
    });
    expect((await keys.create({ name: "one", rateLimitPerMinute: 1 })).record.rateLimitPerMinute).toBe(1);
    expect((await keys.create({ name: "max", rateLimitPerMinute: 10_000 })).record.rateLimitPerMinute).toBe(10_000);
    for (const bad of [0, 10_001, 1.5])
      await expect(keys.create({ name: "bad", rateLimitPerMinute: bad })).rejects.toBeInstanceOf(KeyInputError);
    const auth = new LaneAuth({ keys, limiter: new KeyRateLimiter(), nowMs: Date.now });
    const two = (await keys.create({ name: "two", rateLimitPerMinute: 2 })).token;
    const statuses = await times(3, () => admit(auth, two));
    expect(statuses).toEqual([200, 200, 429]);
    expect((await admit(auth, two)).error).toBe("Rate limit exceeded");
  });

  it("donor: fixed 10/min, no expiry, verified by the store on every request", async () => {
    const keys = await store({ cacheMode: "exclusive" });
    const { record, token } = await keys.create({ name: "supporter", tier: "donor" });
    expect(record).toMatchObject({ tier: "donor", rateLimitPerMinute: DONOR_RATE_LIMIT_PER_MINUTE, expiresAt: null });
    await expect(keys.create({ name: "x", tier: "donor", rateLimitPerMinute: 50 })).rejects.toThrow(
      /donor keys are fixed at 10 requests per minute/,
    );
    await expect(keys.create({ name: "x", tier: "donor", expiresAt: nowS() + 60 })).rejects.toThrow(
      /donor keys never expire/,
    );
    const auth = new LaneAuth({ keys, limiter: new KeyRateLimiter(), nowMs: Date.now });
    const before = keys.counters.storeLookups;
    const statuses = await times(11, () => admit(auth, token));
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
    expect(keys.counters.storeLookups - before).toBe(11); // never served from memory
  });

  it("self-serve (legacy): 30/min, 60-day expiry, the durable revocation list checked on every request", async () => {
    const keys = await store({ cacheMode: "exclusive" });
    await expect(keys.create({ name: "x", tier: "self-serve" })).rejects.toThrow(/self-serve issuance is retired/);
    const issuedAt = nowS() - 59 * 86_400;
    const live = await keys.createLegacySelfServe({ name: "legacy", issuedAt });
    expect(live.record).toMatchObject({
      tier: "self-serve",
      rateLimitPerMinute: SELF_SERVE_RATE_LIMIT_PER_MINUTE,
      expiresAt: issuedAt + SELF_SERVE_TTL_SEC,
    });
    const expired = await keys.createLegacySelfServe({ name: "old", issuedAt: nowS() - 61 * 86_400 });
    const auth = new LaneAuth({ keys, limiter: new KeyRateLimiter(), nowMs: Date.now });
    expect(await times(31, () => admit(auth, live.token))).toEqual([...Array(30).fill(200), 429]);
    expect((await admit(auth, expired.token)).status).toBe(401);

    const other = await keys.createLegacySelfServe({ name: "to-revoke" });
    expect((await admit(auth, other.token)).status).toBe(200);
    expect(await keys.revokeSelfServe(other.record.keyPrefix)).toBe(true);
    expect((await admit(auth, other.token)).status).toBe(401); // at once: self-serve keys are never cached
    expect(await keys.verify(other.token, nowS())).toBeNull();

    // Deactivating a self-serve key also puts it on the revocation list.
    const third = await keys.createLegacySelfServe({ name: "deactivated" });
    expect(await keys.deactivate(third.record.id)).toBe(true);
    const { rows } = await admin.query(
      `select key_prefix from ${schema.name}.api_key_self_serve_revocations where key_prefix = $1`,
      [third.record.keyPrefix],
    );
    expect(rows).toHaveLength(1);
    // A self-serve key's tier cannot be changed; nothing can become self-serve.
    await expect(keys.update(live.record.id, { tier: "standard" })).rejects.toThrow(/keep their tier/);
  });

  it("self-serve fails closed (503) when the revocation list cannot be read; other tiers are unaffected", async () => {
    const keys = await store();
    const legacy = await keys.createLegacySelfServe({ name: "legacy" });
    const std = await keys.create({ name: "std" });
    const donor = await keys.create({ name: "donor", tier: "donor" });
    const auth = new LaneAuth({ keys, limiter: new KeyRateLimiter(), nowMs: Date.now });
    expect((await admit(auth, legacy.token)).status).toBe(200);
    await admin.query(
      `alter table ${schema.name}.api_key_self_serve_revocations rename to api_key_self_serve_revocations_away`,
    );
    try {
      const r = await admit(auth, legacy.token);
      expect(r).toEqual({ status: 503, error: "Public API temporarily unavailable", retryAfter: "60" });
      expect((await admit(auth, std.token)).status).toBe(200);
      expect((await admit(auth, donor.token)).status).toBe(200);
      expect(keys.status().circuit).toBe("closed"); // the store answered: not an outage for the breaker
    } finally {
      await admin.query(
        `alter table ${schema.name}.api_key_self_serve_revocations_away rename to api_key_self_serve_revocations`,
      );
    }
    expect((await admit(auth, legacy.token)).status).toBe(200);
  });
});

describe("spec 5.5 verification cache during a store outage", () => {
  it("a recently verified standard key serves cacheable GETs; non-cacheable, donor, self-serve, never-verified and stale entries get 503", async () => {
    const real = await sqlClient();
    let down = false;
    const refused = () =>
      Promise.reject(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }));
    const flaky: SqlClient = {
      kind: "postgres",
      query: (q, p) => (down ? refused() : real.query(q, p)),
      close: async () => undefined,
    };
    const keys = await store({}, flaky);
    let now = Date.now();
    const auth = new LaneAuth({ keys, limiter: new KeyRateLimiter(), nowMs: () => now });
    const std = (await keys.create({ name: "std" })).token;
    const unseen = (await keys.create({ name: "unseen" })).token;
    const donor = (await keys.create({ name: "donor", tier: "donor" })).token;
    const legacy = (await keys.createLegacySelfServe({ name: "legacy" })).token;
    for (const t of [std, donor, legacy]) expect((await admit(auth, t)).status).toBe(200);
    down = true;
    expect((await admit(auth, std)).status).toBe(200);
    expect(keys.counters.outageHits).toBe(1);
    expect((await admit(auth, std, { cacheableGet: false })).status).toBe(503);
    for (const t of [unseen, donor, legacy])
      expect(await admit(auth, t)).toEqual({
        status: 503,
        error: "Public API temporarily unavailable",
        retryAfter: "60",
      });
    expect((await admit(auth, "not-a-key")).status).toBe(401); // malformed: no store needed
    now += KEY_OUTAGE_GRACE_MS + 1000; // the cached verification is now stale
    expect((await admit(auth, std)).status).toBe(503);
    down = false;
    expect((await keys.check()).state).toBe("ok");
    expect((await admit(auth, std)).status).toBe(200);
  });
});

describe("pepper rotation (keyed hash with a previous-pepper path)", () => {
  it("verifies with the previous pepper, re-hashes with the current one, and rejects unknown peppers", async () => {
    const sql = await sqlClient();
    const oldPepper = "old-pepper-0123456789abcdef";
    const newPepper = "new-pepper-0123456789abcdef";
    const before = await store({ pepper: oldPepper }, sql);
    const { record, token } = await before.create({ name: "pepper" });
    const hashOf = async () =>
      (await admin.query(`select secret_hash, pepper_version from ${schema.name}.api_keys where id = $1`, [record.id]))
        .rows[0];
    const h0 = await hashOf();
    expect(h0.pepper_version).toBe(1);

    expect(await (await store({ pepper: newPepper }, sql)).verify(token, nowS())).toBeNull(); // current pepper only: no match
    const rotating = await store({ pepper: { current: newPepper, previous: oldPepper } }, sql);
    expect(await rotating.verify(token, nowS())).toMatchObject({ id: record.id });
    const h1 = await hashOf();
    expect(h1.secret_hash).not.toBe(h0.secret_hash);
    expect(h1.pepper_version).toBe(2);
    // Now the current pepper alone verifies it, and the old one no longer does.
    expect(await (await store({ pepper: newPepper }, sql)).verify(token, nowS())).toMatchObject({ id: record.id });
    expect(await (await store({ pepper: oldPepper }, sql)).verify(token, nowS())).toBeNull();
    expect(
      await (
        await store({ pepper: { current: "third-pepper-0123456789", previous: "fourth-pepper-012345678" } }, sql)
      ).verify(token, nowS()),
    ).toBeNull();
  });
});

describe("update (spec 4.5)", () => {
  it("changes name, owner, tier, limit and isActive with the tier rules, and applies at once to a cached key", async () => {
    const keys = await store({ cacheMode: "exclusive" });
    const auth = new LaneAuth({ keys, limiter: new KeyRateLimiter(), nowMs: Date.now });
    const { record, token } = await keys.create({ name: "partner", ownerEmail: "a@example.com" });
    expect((await admit(auth, token)).status).toBe(200);
    expect((await admit(auth, token)).status).toBe(200);
    expect(keys.counters.cacheHits).toBeGreaterThan(0);

    const renamed = await keys.update(record.id, { name: "  Partner B ", ownerEmail: "OPS@Example.com" });
    expect(renamed).toMatchObject({
      id: record.id,
      name: "Partner B",
      ownerEmail: "ops@example.com",
      tier: "standard",
      rateLimitPerMinute: 120,
      isActive: true,
      maskedToken: `bl_live_${record.keyPrefix}_…`,
    });
    expect(must(renamed, "the renamed key").updatedAt).toEqual(expect.any(Number));
    expect(must(await keys.update(record.id, { ownerEmail: "" }), "the updated key").ownerEmail).toBeNull();

    // A lower limit is in force at once (the cached verification was dropped): 1 per minute.
    expect(must(await keys.update(record.id, { rateLimitPerMinute: 1 }), "the updated key").rateLimitPerMinute).toBe(1);
    expect(await times(2, () => admit(auth, token))).toEqual([200, 429]);

    expect(await keys.update(record.id, { isActive: false })).toMatchObject({ isActive: false });
    expect((await admit(auth, token)).status).toBe(401);
    expect(await keys.update(record.id, { isActive: true })).toMatchObject({ isActive: true });
    expect(await keys.verify(token, nowS())).toMatchObject({ id: record.id });

    const donor = await keys.update(record.id, { tier: "donor" });
    expect(donor).toMatchObject({ tier: "donor", rateLimitPerMinute: 10, expiresAt: null });
    await expect(keys.update(record.id, { rateLimitPerMinute: 50 })).rejects.toThrow(/donor keys are fixed/);
    expect(await keys.update(record.id, { tier: "standard" })).toMatchObject({
      tier: "standard",
      rateLimitPerMinute: 120,
    });

    await expect(keys.update(record.id, {})).rejects.toMatchObject({ field: "patch" });
    await expect(keys.update(record.id, { tier: "self-serve" })).rejects.toMatchObject({ field: "tier" });
    await expect(keys.update(record.id, { rateLimitPerMinute: 10_001 })).rejects.toMatchObject({
      field: "rateLimitPerMinute",
    });
    await expect(keys.update(record.id, { name: "" })).rejects.toMatchObject({ field: "name" });
    await expect(keys.update(record.id, { isActive: "no" as unknown as boolean })).rejects.toMatchObject({
      field: "isActive",
    });
    await expect(keys.update(record.id, { secretHash: "x" } as never)).rejects.toMatchObject({ field: "patch" });
    expect(await keys.update("00000000-0000-0000-0000-000000000000", { name: "nobody" })).toBeNull();
  });
});

describe("invalid keys are limited per IP on the failure path only", () => {
  it("30 bad keys from an IP leave a valid key from that IP at 200; the 31st bad key gets its own 429", async () => {
    const keys = await store();
    const auth = new LaneAuth({ keys, limiter: new KeyRateLimiter(), nowMs: Date.now });
    const valid = (await keys.create({ name: "valid", rateLimitPerMinute: 1000 })).token;
    const ip = "203.0.113.9";
    const bad = await times(FAILED_KEY_ATTEMPTS_PER_MINUTE, async () =>
      admit(auth, bogus(Math.floor(Math.random() * 1e9)), { ip }),
    );
    expect(bad).toEqual(Array(30).fill(401));
    expect((await admit(auth, valid, { ip })).status).toBe(200);
    const over = await admit(auth, bogus(7), { ip });
    expect(over.status).toBe(429);
    expect(over.error).toBe(TOO_MANY_INVALID_KEYS);
    expect(Number(over.retryAfter)).toBeGreaterThanOrEqual(1);
    // The valid key is judged only by its own quota; another IP is not affected.
    expect(await times(5, () => admit(auth, valid, { ip }))).toEqual(Array(5).fill(200));
    expect((await admit(auth, bogus(8), { ip: "203.0.113.10" })).status).toBe(401);
    // A malformed key counts too, and never reaches the store.
    const lookups = keys.counters.storeLookups;
    expect((await admit(auth, "not-a-key", { ip })).status).toBe(429);
    expect(keys.counters.storeLookups).toBe(lookups);
  });
});

describe("Redis down: the limiter fallback", () => {
  let own: OwnRedis;
  beforeAll(async () => {
    own = await OwnRedis.start();
  });
  afterAll(async () => {
    await own?.stop();
  });

  it("a key never seen here gets 503; a standard key the shared limiter admitted keeps a bounded local budget on cacheable GETs", async () => {
    const redis = await openRedis(own.url, { timeoutMs: 300 });
    try {
      const keys = await store();
      const auth = new LaneAuth({ keys, limiter: new KeyRateLimiter(redis, { timeoutMs: 300 }), nowMs: Date.now });
      const seen = (await keys.create({ name: "seen", rateLimitPerMinute: 20 })).token;
      const never = (await keys.create({ name: "never" })).token;
      const donor = (await keys.create({ name: "donor", tier: "donor" })).token;
      expect((await admit(auth, seen)).status).toBe(200);
      expect((await admit(auth, donor)).status).toBe(200);
      await own.stop();
      expect(await admit(auth, never)).toEqual({
        status: 503,
        error: "Public API temporarily unavailable",
        retryAfter: "60",
      });
      expect((await admit(auth, donor)).status).toBe(503);
      expect((await admit(auth, seen, { cacheableGet: false })).status).toBe(503);
      // Local budget: min(limit / live instances, 30) = 20 here (one instance).
      expect(await times(21, () => admit(auth, seen))).toEqual([...Array(20).fill(200), 429]);
      // Still 503 for the never-seen key after the first refusal (verifying it does not make it "seen").
      expect((await admit(auth, never)).status).toBe(503);
      // Invalid keys are still counted (locally) while Redis is down.
      expect((await admit(auth, bogus(3))).status).toBe(401);
    } finally {
      redis.disconnect();
      await own.start();
    }
  });
});

describe("cache coherence: two apps sharing one Postgres schema", () => {
  it("rotate, update and deactivate on instance A take effect on instance B before they return", async () => {
    const a = await store({ cacheMode: "shared" }, await sqlClient(`${APP}_a`));
    const b = await store({ cacheMode: "shared" }, await sqlClient(`${APP}_b`));
    const empty = mkdtempSync(join(tmpdir(), "ballast-tiers-"));
    tmpDirs.push(empty);
    const limiter = new KeyRateLimiter(); // one budget for both (as Redis would be)
    const appB = createApp({
      store: new PublishedStore(fsReader(empty), 0),
      keys: b,
      limiter,
      corsOrigins: [],
      clockMode: "wall",
    });
    // An unknown API path answers 401 without a valid key and 404 with one (spec 5.2): an auth probe.
    const probe = async (token: string) =>
      (await appB.request("/api/key-probe", { headers: { "X-API-Key": token } })).status;
    // Both instances hold a lease (B registered after A, so it counted both).
    expect(b.liveInstances).toBe(2);

    const { record, token } = await a.create({ name: "partner" });
    expect(await probe(token)).toBe(404);
    const hits = b.counters.cacheHits;
    expect(await probe(token)).toBe(404);
    expect(b.counters.cacheHits).toBe(hits + 1); // B answers from its cache now

    const rotated = must(await a.rotate(record.id), "the rotated key");
    expect(await probe(token)).toBe(401); // at once, though B had it cached
    expect(await probe(rotated.token)).toBe(404);
    expect(await probe(rotated.token)).toBe(404);

    await a.update(record.id, { rateLimitPerMinute: 1 });
    expect([await probe(rotated.token), await probe(rotated.token)]).toEqual([404, 429]); // the new limit, at once

    expect(await a.deactivate(record.id)).toBe(true);
    expect(await probe(rotated.token)).toBe(401);
  });

  it("a writer waits for an instance that holds a live lease but has not acknowledged, at most until its lease ends", async () => {
    // This store's own lease is 20 s, so its give-up deadline (lease + 1 s) is far from the silent
    // instance's 1.5 s lease: the bound below tells them apart however busy the machine is.
    const a = await store({ leaseMs: 20_000 });
    const { record } = await a.create({ name: "silent" });
    await admin.query(
      `insert into ${schema.name}.api_key_instances (instance_id, seen_generation, lease_until) values ('silent-instance', 0, now() + interval '1500 milliseconds')`,
    );
    try {
      const t0 = performance.now();
      expect(await a.deactivate(record.id)).toBe(true);
      const waited = performance.now() - t0;
      expect(waited).toBeGreaterThan(1000);
      expect(waited).toBeLessThan(15_000);
    } finally {
      await admin.query(`delete from ${schema.name}.api_key_instances where instance_id = 'silent-instance'`);
    }
  });
});

describe("development key of `make run`", () => {
  it("is reused across restarts (kept in a state/dev-key file of its store, mode 0600) instead of adding a key per run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ballast-devkey-"));
    tmpDirs.push(dir);
    const config = {
      PORT: 0,
      HOST: "127.0.0.1",
      BALLAST_DATA_DIR: dir,
      CLOCK: "wall" as const,
      DATABASE_URL: `${schema.url}&application_name=${APP}_dev`,
      API_KEY_PEPPER: PEPPER,
      STATUS_RECORD_INTERVAL_SEC: 0,
    };
    const first = await startServer(config, { devKey: true, devKeyLimitPerMinute: 50 });
    await first.close();
    expect(first.devKey).toMatch(/^bl_live_/);
    expect(first.devKeyReused).toBe(false);
    expect(statSync(devKeyPath(dir, config.DATABASE_URL)).mode & 0o777).toBe(0o600);
    const second = await startServer(config, { devKey: true, devKeyLimitPerMinute: 70 });
    try {
      expect(second.devKey).toBe(first.devKey);
      expect(second.devKeyReused).toBe(true);
      const dev = (await second.keys.list()).filter((k) => k.name === "development" && k.isActive);
      expect(dev).toHaveLength(1);
      expect(dev[0].rateLimitPerMinute).toBe(70); // the limit asked for this run
      // A key that no longer verifies (deactivated) is replaced.
      await second.keys.deactivate(dev[0].id);
    } finally {
      await second.close();
    }
    const third = await startServer(config, { devKey: true, devKeyLimitPerMinute: 70 });
    try {
      expect(third.devKeyReused).toBe(false);
      expect(third.devKey).not.toBe(first.devKey);
    } finally {
      await third.close();
    }
  });

  it("keeps one key per state store when a checkout switches between embedded and Postgres modes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ballast-devkey-switch-"));
    tmpDirs.push(dir);
    const base = {
      PORT: 0,
      HOST: "127.0.0.1",
      BALLAST_DATA_DIR: dir,
      CLOCK: "wall" as const,
      STATUS_RECORD_INTERVAL_SEC: 0,
    };
    const embedded = { ...base, API_KEY_PEPPER: PEPPER };
    const postgres = { ...base, API_KEY_PEPPER: PEPPER, DATABASE_URL: `${schema.url}&application_name=${APP}_switch` };
    const run = async (config: typeof embedded) => {
      const s = await startServer(config, { devKey: true, devKeyLimitPerMinute: 60 });
      await s.close();
      return { token: must(s.devKey, "development key"), reused: s.devKeyReused };
    };
    const e1 = await run(embedded);
    const p1 = await run(postgres);
    const e2 = await run(embedded);
    const p2 = await run(postgres);
    expect([e1.reused, p1.reused]).toEqual([false, false]);
    expect(p1.token).not.toBe(e1.token); // two stores, two keys
    expect(e2).toEqual({ token: e1.token, reused: true });
    expect(p2).toEqual({ token: p1.token, reused: true });
    const kept = readdirSync(join(dir, "state")).filter((f) => f.startsWith("dev-key"));
    expect(kept.sort()).toEqual(["dev-key", expect.stringMatching(/^dev-key\.pg-[0-9a-f]{12}$/)]);
  });
});
