/**
 * Faults of the state store (real Postgres) and the shared limiter (a redis-server of this test's
 * own): the real server keeps running, answers every keyed request during a fault (never hangs)
 * with exactly the status the spec names, and serves 200 again once the dependency is back:
 * - a key never seen by this instance (created just before the fault, never admitted by the shared
 *   limiter: no bucket in Redis) gets exactly 503 `Public API temporarily unavailable` +
 *   `Retry-After: 60` while Postgres is unreachable or stalled and while Redis is paused or down
 *   (fail closed, spec 5.5; `LaneAuth.apiKey`);
 * - a standard key this instance verified and the shared limiter admitted just before the fault gets
 *   exactly 200 on a cacheable GET (verification cache; local limiter fallback).
 * A hung Postgres (a proxy that stops forwarding) costs one timeout, not one per request: at most one
 * call passes the circuit breaker during the requests. Health names the state store, its breaker and
 * a generic reason, never driver text. Only this test's own Postgres connections (by
 * application_name or through its own proxy) and its own redis-server are disturbed.
 *
 * No stopwatches: replies are only held to a liveness bound (LIVENESS_MS, generous for a loaded
 * 2-core machine); how fast they come (≤ 1 s, the breaker's burst ≤ 600 ms, N requests ≈ one
 * timeout) is measured by `make bench` (scripts/bench/fault-latency.ts). Reply times are still printed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadApiConfig } from "../../api/config.ts";
import type { CircuitBreaker } from "../../api/lib/circuit-breaker.ts";
import type { KeyStore } from "../../api/lib/key-store.ts";
import { type RunningServer, startServer } from "../../api/server.ts";
import { buildRecorded } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";
import { pgProxy } from "../helpers/pg-proxy.ts";
import { freePort, OwnRedis } from "../helpers/redis-server.ts";

const PG = "postgres://postgres@127.0.0.1:5432/test";
const RUN = `${process.pid}_${Date.now()}`;
const SCHEMA = `ballast_faults_${RUN}`;
/** Empty schema for the unreachable-at-boot server: its table is created lazily once Postgres is reachable. */
const SCHEMA_D = `ballast_faults_d_${RUN}`;
const APP = `ballast_faults_${RUN}`;
const PEPPER = "pepper-for-fault-tests-0123456789";
const KEYED = "/api/stablecoin-summary/usdt-tether";
const UNAVAILABLE = { error: "Public API temporarily unavailable" };
const REPO = join(import.meta.dirname, "../..");
/** Liveness bound of one reply during a fault: it answers, it never hangs (deadlines are 300 ms; the speed claim is in `make bench`). */
const LIVENESS_MS = 5000;

let dir: string;
let admin: pg.Client;
let redis: OwnRedis;
let srv: RunningServer;
/** Measured reply times (ms) per case, printed at the end. */
const measured: Record<string, number | string> = {};

const pgUrl = (schema: string, app: string, port = 5432) =>
  `postgres://postgres@127.0.0.1:${port}/test?options=-csearch_path%3D${schema}&application_name=${app}`;

function serverEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PORT: "0",
    HOST: "127.0.0.1",
    BALLAST_DATA_DIR: dir,
    API_KEY_PEPPER: PEPPER,
    CLOCK: "auto",
    STATE_STORE_COOLDOWN_MS: "1000",
    ...extra,
  };
}

/** Health must never carry driver text: no error codes, hosts or ports. */
function expectNoRawErrorText(body: unknown): void {
  const text = JSON.stringify(body);
  expect(text).not.toMatch(
    /ECONNREFUSED|ECONNRESET|ETIMEDOUT|\d+\.\d+\.\d+\.\d+:\d+|localhost:\d+|Query read timeout|no answer within|terminat|failed:/i,
  );
}

type Reply = { status: number; ms: number; body: unknown; retryAfter: string | null };

async function get(base: string, path: string, key?: string): Promise<Reply> {
  const t0 = performance.now();
  const res = await fetch(`${base}${path}`, {
    headers: key ? { "X-API-Key": key } : {},
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  const ms = Math.round(performance.now() - t0);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, ms, body, retryAfter: res.headers.get("Retry-After") };
}

/** A reply during a fault: it came (liveness) with exactly `status`; a 503 is the spec's exact one. */
function expectFaultReply(r: Reply, status: 200 | 503): void {
  expect(r.ms).toBeLessThan(LIVENESS_MS);
  expect(r.status).toBe(status);
  if (status === 503) {
    expect(r.body).toEqual(UNAVAILABLE);
    expect(r.retryAfter).toBe("60");
  }
}

/**
 * Counts the calls the state store's circuit breaker lets through (to the database) while `fn` runs.
 * `breaker` is private to KeyStore: reached here on purpose, to assert the mechanism instead of a time.
 */
async function breakerPasses<T>(
  keys: KeyStore,
  fn: () => Promise<T>,
): Promise<{ out: T; passed: number; refused: number }> {
  const breaker = (keys as unknown as { breaker: CircuitBreaker }).breaker;
  const original = breaker.tryAcquire;
  let passed = 0,
    refused = 0;
  breaker.tryAcquire = function (force?: boolean) {
    const ok = original.call(this, force);
    if (ok) passed++;
    else refused++;
    return ok;
  };
  try {
    return { out: await fn(), passed, refused };
  } finally {
    breaker.tryAcquire = original;
  }
}

/** Polls `path` with `key` until 200; returns ms until then. Fails after `timeoutMs`. */
async function until200(base: string, key: string, timeoutMs = 8000): Promise<number> {
  const t0 = performance.now();
  let last: Reply | undefined;
  while (performance.now() - t0 < timeoutMs) {
    last = await get(base, KEYED, key);
    if (last.status === 200) return Math.round(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no 200 within ${timeoutMs} ms; last ${last?.status} ${JSON.stringify(last?.body)}`);
}

const freshKey = async () => (await srv.keys.create({ name: "fault-test" })).token;
/**
 * A key created now and never used: this instance never verified it and the shared limiter never
 * admitted it (asserted: no bucket of its id in this test's Redis), so during a fault it must fail closed.
 */
async function neverSeenKey(): Promise<string> {
  const { record, token } = await srv.keys.create({ name: "fault-test-never-seen" });
  const r = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  try {
    expect(await r.keys(`*${record.id}*`)).toEqual([]);
  } finally {
    r.disconnect();
  }
  return token;
}
const base = () => `http://127.0.0.1:${srv.port}`;
const appConnections = async (app: string) =>
  Number(
    (await admin.query("select count(*)::int as n from pg_stat_activity where application_name = $1", [app])).rows[0].n,
  );

beforeAll(async () => {
  ({ dir } = await buildRecorded("ballast-faults-"));
  admin = new pg.Client({ connectionString: PG, application_name: `${APP}_admin` });
  await admin.connect();
  await admin.query(`create schema ${SCHEMA}`);
  await admin.query(`create schema ${SCHEMA_D}`);
  redis = await OwnRedis.start();
  srv = await startServer(loadApiConfig(serverEnv({ DATABASE_URL: pgUrl(SCHEMA, APP), REDIS_URL: redis.url })));
});

afterAll(async () => {
  console.log(`measured reply times (ms): ${JSON.stringify(measured)}`);
  await srv?.close();
  await redis?.stop();
  if (admin) {
    await admin.query(`drop schema if exists ${SCHEMA} cascade`);
    await admin.query(`drop schema if exists ${SCHEMA_D} cascade`);
    await admin.end();
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("Postgres connections terminated (pg_terminate_backend)", () => {
  it("keeps the process alive, health answers at once and keyed requests recover", async () => {
    const warm = await freshKey();
    const fresh = await freshKey();
    expect((await get(base(), KEYED, warm)).status).toBe(200);
    expect(await appConnections(APP)).toBeGreaterThan(0);

    const { rows } = await admin.query(
      "select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1) t",
      [APP],
    );
    expect(rows[0].n).toBeGreaterThan(0);

    const health = await get(base(), "/api/health");
    expect(health.status).toBe(200);
    expect(health.ms).toBeLessThan(LIVENESS_MS);
    measured.terminate_health = health.ms;
    measured.terminate_fresh_key_to_200 = await until200(base(), fresh, 5000);
    expect(srv.stateStatus().state).toBe("ok");
    expect(await appConnections(APP)).toBeGreaterThan(0);
  });
});

describe("Redis paused (CLIENT PAUSE 5000 ALL on this test's redis-server)", () => {
  it("during the pause: 503 for a never-seen key, 200 for a key admitted before; 200 once it ends", async () => {
    const cached = await freshKey();
    const fresh = await neverSeenKey();
    expect((await get(base(), KEYED, cached)).status).toBe(200);
    const ctl = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      await ctl.call("CLIENT", "PAUSE", "5000", "ALL");
      const pausedAt = performance.now();
      // A standard key the shared limiter admitted before keeps a bounded local budget on a cacheable
      // GET: the limiter's deadline fires and the local fallback answers.
      const a = await get(base(), KEYED, cached);
      expectFaultReply(a, 200);
      // A key never seen on this instance fails closed while the shared limiter is down (spec 5.5).
      // Only the deadline can make it 503 here: were the limiter call to wait for the pause, it would pass.
      const b = await get(base(), KEYED, fresh);
      expectFaultReply(b, 503);
      // Refusing it did not make it "seen": still 503.
      expectFaultReply(await get(base(), KEYED, fresh), 503);
      measured.redis_pause = `${a.status} in ${a.ms}, fresh key ${b.status} in ${b.ms}`;
      await new Promise((r) => setTimeout(r, Math.max(0, 5000 - (performance.now() - pausedAt))));
      measured.redis_pause_end_to_200 = await until200(base(), fresh);
    } finally {
      ctl.disconnect();
    }
  });
});

describe("Redis stopped and restarted (this test's redis-server)", () => {
  it("while it is down: 503 for a never-seen key, 200 for a key admitted before; 200 after restart", async () => {
    const cached = await freshKey();
    const fresh = await neverSeenKey();
    expect((await get(base(), KEYED, cached)).status).toBe(200);
    await redis.stop();
    const a = await get(base(), KEYED, cached);
    // A standard key the shared limiter admitted before keeps a bounded local budget on a cacheable GET.
    expectFaultReply(a, 200);
    const b = await get(base(), KEYED, fresh);
    expectFaultReply(b, 503);
    expectFaultReply(await get(base(), KEYED, fresh), 503);
    measured.redis_down = `${a.status} in ${a.ms}, fresh key ${b.status} in ${b.ms}`;
    await redis.start();
    // The never-seen key needs the shared limiter itself (no local fallback): 200 means Redis is back.
    measured.redis_restart_to_200 = await until200(base(), fresh);
  });
});

describe("Postgres stalled (ACCESS EXCLUSIVE lock on api_keys held by an open transaction)", () => {
  it("a never-seen key gets 503, concurrent requests too (the breaker refuses them); 200 after release", async () => {
    const cached = await freshKey();
    const fresh = await neverSeenKey();
    expect((await get(base(), KEYED, cached)).status).toBe(200);
    const locker = new pg.Client({ connectionString: PG, application_name: `${APP}_locker` });
    await locker.connect();
    try {
      await locker.query("begin");
      await locker.query(`lock table ${SCHEMA}.api_keys in access exclusive mode`);
      const a = await get(base(), KEYED, fresh);
      expectFaultReply(a, 503);
      // The cached key is served from memory: this instance's lease (on another table) is still confirmed.
      const c = await get(base(), KEYED, cached);
      expectFaultReply(c, 200);
      // More requests than pool connections (4): waiting for a connection is bounded too.
      const {
        out: burst,
        passed,
        refused,
      } = await breakerPasses(srv.keys, () => Promise.all(Array.from({ length: 10 }, () => get(base(), KEYED, fresh))));
      for (const r of burst) expectFaultReply(r, 503);
      measured.pg_stalled = `fresh ${a.status} in ${a.ms}, cached ${c.status} in ${c.ms}, burst of 10 max ${Math.max(...burst.map((r) => r.ms))}`;
      const st = srv.stateStatus();
      expect(st).toMatchObject({ state: "unavailable", reason: "timeout", backend: "postgres" });
      expect(["open", "half-open"]).toContain(st.circuit); // cool-down 1 s here
      // The breaker made the burst fail fast: at most one call (a half-open probe once the 1 s
      // cool-down passed) reached the stalled table, so at most one timeout; the rest were refused.
      expect(passed).toBeLessThanOrEqual(1);
      expect(refused).toBeGreaterThanOrEqual(burst.length - 1);
    } finally {
      await locker.query("commit").catch(() => undefined);
      await locker.end();
    }
    measured.pg_release_to_200 = await until200(base(), fresh);
    expect(srv.stateStatus()).toMatchObject({ state: "ok", reason: null, circuit: "closed" });
  });
});

describe("Postgres hung (this test's proxy stops forwarding): the circuit breaker", () => {
  it("N keyed requests pass the breaker at most once (one timeout in total); a hot standard key keeps serving; health names the breaker without driver text", async () => {
    const port = await freePort();
    const proxy = await pgProxy(port);
    const hung = await startServer(
      loadApiConfig(
        serverEnv({
          DATABASE_URL: pgUrl(SCHEMA, `${APP}_h`, port),
          STATE_STORE_COOLDOWN_MS: "30000",
          STATUS_RECORD_INTERVAL_SEC: "0",
        }),
      ),
    );
    try {
      const b = `http://127.0.0.1:${hung.port}`;
      const hot = (await hung.keys.create({ name: "hot" })).token;
      const never = (await hung.keys.create({ name: "never-used" })).token;
      expect((await get(b, KEYED, hot)).status).toBe(200);
      proxy.freeze();
      // This instance's cache lease lapses (its renewal hangs): from now on every request asks the store.
      await new Promise((r) => setTimeout(r, 3500));
      const N = 20;
      const t0 = performance.now();
      const {
        out: replies,
        passed,
        refused,
      } = await breakerPasses(hung.keys, async () => {
        const out: Reply[] = [];
        for (let i = 0; i < N; i++) out.push(await get(b, KEYED, i % 2 ? never : hot));
        return out;
      });
      const total = Math.round(performance.now() - t0);
      measured.pg_hung = `${N} requests in ${total} ms (timeout 300 ms; slowest ${Math.max(...replies.map((r) => r.ms))} ms; ${passed} passed the breaker)`;
      for (const [i, r] of replies.entries()) expectFaultReply(r, i % 2 ? 503 : 200); // 200: spec 5.5, verified standard key, cacheable GET
      // One timeout and then refusals by the open breaker (cool-down 30 s): at most one of the N
      // requests' store calls reached the hung proxy; without a breaker every lookup would (N/2 timeouts).
      expect(passed).toBeLessThanOrEqual(1);
      expect(refused).toBeGreaterThanOrEqual(N - 1);
      expect(hung.keys.counters.outageHits).toBeGreaterThanOrEqual(N / 2);
      const health = await get(b, "/api/health");
      expect(health.status).toBe(200);
      expect((health.body as { stateStore?: unknown }).stateStore).toMatchObject({
        state: "unavailable",
        circuit: "open",
        reason: "timeout",
        backend: "postgres",
      });
      expect((health.body as { warnings: string[] }).warnings[0]).toMatch(
        /^state store \(postgres\) unavailable \(sets status degraded\): timeout, circuit open; /,
      );
      expectNoRawErrorText(health.body);
      proxy.thaw();
      // An explicit probe closes the breaker (retried: health's own background probe may be in flight).
      for (let i = 0; i < 50 && (await hung.keys.check()).state !== "ok"; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(hung.keys.status()).toMatchObject({ state: "ok", circuit: "closed", reason: null });
      expect((await get(b, KEYED, never)).status).toBe(200);
    } finally {
      await hung.close();
      await proxy.close();
    }
  });
});

describe("Postgres unreachable at boot", () => {
  it("listens, serves health, answers keyed requests 503, and heals once Postgres is reachable", async () => {
    const port = await freePort(); // nothing listens there yet: connection refused
    const app = `${APP}_d`;
    const down = await startServer(loadApiConfig(serverEnv({ DATABASE_URL: pgUrl(SCHEMA_D, app, port) })), {
      devKey: true,
    });
    let proxy: Awaited<ReturnType<typeof pgProxy>> | undefined;
    try {
      const b = `http://127.0.0.1:${down.port}`;
      expect(down.devKey).toBeUndefined();
      expect(down.devKeyError).toMatch(/state store/);
      expect(down.stateStatus()).toMatchObject({ state: "unavailable", lastOkAt: null });
      const health = await get(b, "/api/health");
      expect(health.status).toBe(200);
      expect(health.ms).toBeLessThan(LIVENESS_MS);
      expect((health.body as { stateStore?: unknown }).stateStore).toMatchObject({
        state: "unavailable",
        lastOkAt: null,
        reason: "connection refused",
        backend: "postgres",
      });
      expectNoRawErrorText(health.body);
      expect((await get(b, "/openapi.json")).status).toBe(200);
      const token = `bl_live_${"0123456789abcdef"}_${"A".repeat(32)}`;
      const r = await get(b, KEYED, token);
      expectFaultReply(r, 503);
      measured.pg_down_at_boot = `health ${health.ms}, keyed ${r.status} in ${r.ms}`;
      expect((await get(b, KEYED)).status).toBe(401);

      proxy = await pgProxy(port);
      const created = await down.keys.create({ name: "after-outage" }); // first use creates the schema
      measured.pg_up_after_boot_to_200 = await until200(b, created.token, 5000);
      expect(down.stateStatus().state).toBe("ok");
      expect(((await get(b, "/api/health")).body as { stateStore?: unknown }).stateStore).toMatchObject({
        state: "ok",
        reason: null,
        circuit: "closed",
      });
      expect(
        (
          await admin.query(
            "select count(*)::int as n from information_schema.tables where table_schema = $1 and table_name = 'api_keys'",
            [SCHEMA_D],
          )
        ).rows[0].n,
      ).toBe(1);
    } finally {
      await down.close();
      await proxy?.close();
    }
  });
});

/** Runs `api/server.ts --dev-key` as its own process; resolves once it printed `Listening on`. */
async function spawnServer(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; out: () => string; base: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "api/server.ts", "--dev-key"], {
    cwd: REPO,
    env: { ...process.env, ...serverEnv(env) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  must(child.stdout, "the server's piped stdout").on("data", (d) => {
    out += d;
  });
  must(child.stderr, "the server's piped stderr").on("data", () => undefined);
  const t0 = Date.now();
  while (!/Listening on (\S+)/.test(out)) {
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${out}`);
    if (Date.now() - t0 > 60_000) throw new Error(`server did not listen: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, out: () => out, base: must(/Listening on (\S+)/.exec(out), "a Listening on line")[1] };
}

async function stopChild(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await exited;
  return child.exitCode;
}

describe("server process (api/server.ts --dev-key)", () => {
  let exitCode: number | null = null;
  it("survives pg_terminate_backend and passes DEV_KEY_RATE_LIMIT to the development key", async () => {
    const app = `${APP}_main`;
    const { child, out, base: b } = await spawnServer({ DATABASE_URL: pgUrl(SCHEMA, app), DEV_KEY_RATE_LIMIT: "3" });
    try {
      const key = must(/API key: (\S+)/.exec(out()), "an API key line")[1];
      expect(key).toMatch(/^bl_live_[0-9a-f]{16}_[A-Za-z0-9_-]{32}$/);
      expect((await get(b, KEYED, key)).status).toBe(200);
      expect(await appConnections(app)).toBeGreaterThan(0);
      await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1", [app]);
      await new Promise((r) => setTimeout(r, 500));
      expect(child.exitCode).toBeNull();
      expect((await get(b, "/api/health")).status).toBe(200);
      // Limit 3 per minute: two more pass, the fourth request is refused.
      expect((await get(b, KEYED, key)).status).toBe(200);
      expect((await get(b, KEYED, key)).status).toBe(200);
      const limited = await get(b, KEYED, key);
      expect(limited.status).toBe(429);
      expect(child.exitCode).toBeNull();
    } finally {
      exitCode = await stopChild(child);
    }
    expect(exitCode).toBe(0); // clean SIGTERM shutdown
  });

  it("prints a clear line instead of a key when Postgres is down at boot", async () => {
    const {
      child,
      out,
      base: b,
    } = await spawnServer({ DATABASE_URL: pgUrl(SCHEMA, `${APP}_main_down`, await freePort()) });
    try {
      expect(out()).toMatch(/No development key: the state store is unavailable/);
      expect(out()).not.toMatch(/API key:/);
      expect((await get(b, "/api/health")).status).toBe(200);
    } finally {
      exitCode = await stopChild(child);
    }
    expect(exitCode).toBe(0);
  });
});
