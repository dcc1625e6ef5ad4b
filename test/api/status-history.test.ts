/**
 * Public status history on the real Postgres (a schema of this test's own): the API's recorder
 * observes health as the serving build and the clock change, the hysteresis state and transitions
 * land in `status_state` / `status_transitions`, and `/api/public-status-history` shows only
 * incidents opened by public-impact causes with their recovery rows. Faults are made on this test's
 * own tables and connections only (table locks from its own admin connection, pg_terminate_backend
 * by this test's application_name); the shared Postgres keeps running.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import { loadApiConfig } from "../../api/config.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import {
  evaluate,
  type StatusObservation,
  type StatusState,
  StatusHistoryStore,
  StatusRecorder,
} from "../../api/lib/status-history.ts";
import type { Health } from "../../api/health.ts";
import { statusObserver } from "../../api/routes/health.ts";
import type { RouteServices } from "../../api/routes/route.ts";
import { startServer } from "../../api/server.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { cleanManifestRecords, manifestFile } from "../helpers/manifest.ts";
import { createTestSchema, PG_URL } from "../helpers/pg-schema.ts";

const RUN = `${process.pid}_${Date.now()}`;
const APP = `ballast_status_${RUN}`;
const PEPPER = "pepper-for-status-tests-0123456789";
const UNAVAILABLE = { error: "Public status history unavailable" };
/** Wall clock of the test (s); the app, the store and the recorder all read it. */
const T0 = Math.floor(Date.now() / 1000);
let clockMs = T0 * 1000;
const at = (dt: number) => {
  clockMs = (T0 + dt) * 1000;
};

let dir: string;
let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: SqlClient;
let keys: KeyStore;
let history: StatusHistoryStore;
let recorder: StatusRecorder;
let app: ReturnType<typeof createApp>;
let token: string;
let admin: pg.Client;

/**
 * Publishes a build made on the wall clock whose caches were refreshed at `dataAsOf` (stablecoins,
 * stablecoin-charts, stress-signals) and whose list snapshot is `ok` or `stale` (publication
 * coverage incomplete: degraded, not a public-impact cause). Health reads only the manifest.
 */
function publish(id: string, dataAsOf: number, opts: { listStale?: boolean; into?: string } = {}): void {
  const root = opts.into ?? dir;
  const file = (artifact: string, maxAgeSec: number) => manifestFile(artifact, maxAgeSec, dataAsOf);
  const source = (endpoint: string, observedAt: number, status: "ok" | "stale" = "ok") => ({
    endpoint,
    status,
    rows: 1,
    dropped: {},
    newestObservedAt: observedAt,
    captures: [{ path: `raw/${endpoint}.json`, origin: "live", observedAt, sha256: "0", rows: 1 }],
  });
  const manifest: BuildManifest = {
    schemaVersion: "1.4.0",
    buildId: id,
    asOf: dataAsOf,
    generatedAt: dataAsOf,
    clock: "wall",
    contentHash: "0",
    files: [file("stablecoins", 600), file("stablecoin-charts", 3600), file("stress-signals", 3600)],
    sources: [
      source("defillama.stablecoins", opts.listStale ? dataAsOf - 86400 : dataAsOf, opts.listStale ? "stale" : "ok"),
      source("frankfurter.rates", dataAsOf - 3600),
    ],
    ...cleanManifestRecords(),
  };
  mkdirSync(join(root, "builds", id), { recursive: true });
  writeFileSync(join(root, "builds", id, "manifest.json"), JSON.stringify(manifest));
  writeFileSync(
    join(root, "latest.json"),
    JSON.stringify({ buildId: id, asOf: dataAsOf, manifest: `builds/${id}/manifest.json` }),
  );
}

/** One recorder observation at test time `dt`. */
async function tick(dt: number): Promise<void> {
  at(dt);
  await recorder.tick();
}

/** The JSON of an error answer. */
type ErrorBody = { error: string };

/** GET `path` (keyed, or without a key when `key` is null); `T` is the JSON body the test expects. */
async function get<T = unknown>(path: string, key: string | null = token) {
  const t0 = performance.now();
  const res = await app.request(path, { headers: key === null ? {} : { "X-API-Key": key } });
  return { status: res.status, headers: res.headers, body: (await res.json()) as T, ms: performance.now() - t0 };
}
const history$ = async (query = "") => {
  const r = await get(`/api/public-status-history${query}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as {
    timestamp: number;
    currentStatus: string;
    lastChangedAt: number | null;
    transitions: { id: number; from: string | null; to: string; transitionType: string; reason: string; at: number }[];
  };
};
/** Transitions as `[dt, from → to]` for compact comparison. */
const brief = (ts: { at: number; from: string | null; to: string }[]) =>
  ts.map((t) => [t.at - T0, `${t.from} → ${t.to}`]);
const stored = async () =>
  (
    await admin.query(
      `select previous_status, next_status, created_at::bigint - ${T0} as dt from ${schema.name}.status_transitions where scope = 'global' order by created_at, id`,
    )
  ).rows.map((r) => [Number(r.dt), `${r.previous_status} → ${r.next_status}`]);

/** Runs `fn` while this test's admin connection holds an ACCESS EXCLUSIVE lock on `table` of its schema. */
async function withLock<T>(table: string, fn: () => Promise<T>): Promise<T> {
  const locker = new pg.Client({ connectionString: PG_URL, application_name: `${APP}_locker` });
  await locker.connect();
  try {
    await locker.query("begin");
    await locker.query(`lock table ${schema.name}.${table} in access exclusive mode`);
    return await fn();
  } finally {
    await locker.query("rollback").catch(() => undefined);
    await locker.end();
  }
}

beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  dir = mkdtempSync(join(tmpdir(), "ballast-status-"));
  schema = await createTestSchema("ballast_status");
  admin = new pg.Client({ connectionString: PG_URL, application_name: `${APP}_admin` });
  await admin.connect();
  sql = await openSqlClient({ databaseUrl: `${schema.url}&application_name=${APP}`, pgliteDir: "" });
  keys = new KeyStore(sql, PEPPER);
  await keys.init();
  token = (await keys.create({ name: "status", rateLimitPerMinute: 10000 })).token;
  history = new StatusHistoryStore(sql);
  const store = new PublishedStore(fsReader(dir), 0, () => clockMs);
  const services: RouteServices = { stateStore: () => keys.status() };
  recorder = new StatusRecorder({
    history,
    observe: statusObserver({ store, clockMode: "auto", nowMs: () => clockMs, services }),
    intervalSec: 60,
    nowMs: () => clockMs,
  });
  services.statusHistory = { store: history, recorder: () => recorder.status() };
  app = createApp({
    store,
    keys,
    limiter: new KeyRateLimiter(),
    corsOrigins: [],
    clockMode: "auto",
    nowMs: () => clockMs,
    services,
  });
  publish("b1", T0);
});

afterAll(async () => {
  await recorder?.stop();
  await sql?.close();
  await admin?.end();
  await schema?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("recording and the public history (one instance)", () => {
  it("before any observation: 200 with no transitions and lastChangedAt null; the route reads the status /api/health reports", async () => {
    at(30);
    const h = await history$();
    expect(h).toEqual({ timestamp: T0 + 30, currentStatus: "healthy", lastChangedAt: null, transitions: [] });
    expect((await get<Health>("/api/health", null)).body.status).toBe("healthy");
  });

  it("the first observation initialises the state (healthy: nothing public to show)", async () => {
    await tick(60);
    const r = await get("/api/public-status-history");
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("public, max-age=60");
    expect(r.headers.get("x-data-age")).toBe("0");
    expect(r.body).toEqual({ timestamp: T0 + 60, currentStatus: "healthy", lastChangedAt: T0 + 60, transitions: [] });
    expect(await stored()).toEqual([[60, "null → healthy"]]);
    expect(recorder.status()).toMatchObject({
      state: "ok",
      lastError: null,
      lastRecordedAt: T0 + 60,
      pendingObservations: 0,
      intervalSec: 60,
    });
  });

  it("an incident opened by a non-public cause (list snapshot stale: publication coverage) is recorded but not shown", async () => {
    publish("b2", T0 + 100, { listStale: true });
    await tick(120);
    expect((await get<Health>("/api/health", null)).body.status).toBe("degraded");
    expect(await stored()).toEqual([[60, "null → healthy"]]); // one raw degraded: hysteresis hold
    await tick(180);
    publish("b3", T0 + 200);
    await tick(240);
    await tick(300);
    expect(await stored()).toEqual([
      [60, "null → healthy"],
      [180, "healthy → degraded"],
    ]); // 2 healthy, 60 s in degraded: hold
    await tick(360);
    expect(await stored()).toEqual([
      [60, "null → healthy"],
      [180, "healthy → degraded"],
      [360, "degraded → healthy"],
    ]);
    expect((await history$()).transitions).toEqual([]);
  });

  it("a cache going stale (clock) opens a public incident; its later rows and the recovery are shown, newest first", async () => {
    // 8000 s after b3's data: stablecoins (budget 600 s) is past 12x → raw stale → public status stale at once
    await tick(8200);
    expect((await get<Health>("/api/health", null)).body.status).toBe("stale");
    let h = await history$();
    expect(h.currentStatus).toBe("stale");
    expect(h.lastChangedAt).toBe(T0 + 8200);
    expect(h.transitions).toEqual([
      {
        id: expect.any(Number),
        from: "healthy",
        to: "stale",
        transitionType: "degrade",
        reason: "raw-stale-immediate-escalation: cache:stablecoins stale",
        at: T0 + 8200,
      },
    ]);
    // a fresh build whose list snapshot is stale: raw degraded (non-public cause), 2 in a row and 180 s in stale
    publish("b4", T0 + 8250, { listStale: true });
    await tick(8260);
    await tick(8320);
    await tick(8380);
    // then healthy: 3 in a row and 120 s in degraded
    publish("b5", T0 + 8390);
    for (const dt of [8440, 8500, 8560]) await tick(dt);
    h = await history$();
    expect(h.currentStatus).toBe("healthy");
    expect(brief(h.transitions)).toEqual([
      [8560, "degraded → healthy"],
      [8380, "stale → degraded"],
      [8200, "healthy → stale"],
    ]);
    expect(h.transitions.map((t) => t.transitionType)).toEqual(["recover", "recover", "degrade"]);
    expect(h.transitions[1].reason).toBe("raw-degraded-recovery-threshold"); // its cause is not public: not named
    expect(h.transitions[0].reason).toBe("raw-healthy-recovery-threshold");
    expect(h.transitions[0].id).toBeGreaterThan(h.transitions[1].id);
    expect(h.lastChangedAt).toBe(T0 + 8560);
  });

  it("a state store outage (api_keys locked) is a public cause (db-unhealthy) while the status tables still answer", async () => {
    const fresh = (await keys.create({ name: "never-verified" })).token;
    await withLock("api_keys", async () => {
      await expect(keys.verify(fresh, T0)).rejects.toThrow(/state store/);
      expect(keys.status().state).toBe("unavailable");
      await tick(8620);
      await tick(8680);
    });
    expect((await get<Health>("/api/health", null)).body.status).toBe("degraded");
    expect((await keys.check()).state).toBe("ok");
    for (const dt of [8740, 8800, 8860]) await tick(dt);
    const h = await history$();
    expect(brief(h.transitions).slice(0, 2)).toEqual([
      [8860, "degraded → healthy"],
      [8680, "healthy → degraded"],
    ]);
    expect(h.transitions[1].reason).toBe("raw-degraded-threshold: db-unhealthy degraded");
  });

  it("limit and window: newest first, at most limit, only the window; bad values are 400 naming the parameter", async () => {
    expect(brief((await history$("?limit=2")).transitions)).toEqual([
      [8860, "degraded → healthy"],
      [8680, "healthy → degraded"],
    ]);
    expect((await history$("?limit=200&window=7d")).transitions).toHaveLength(5);
    // two days later: a new public incident; the 24h window holds only it
    publish("b6", T0 + 2 * 86400);
    await tick(2 * 86400 + 60);
    await tick(2 * 86400 + 9000); // stablecoins past 12x again: stale at once
    expect(brief((await history$("?window=24h")).transitions)).toEqual([[2 * 86400 + 9000, "healthy → stale"]]);
    expect((await history$("?window=7d")).transitions).toHaveLength(6);
    expect((await history$()).transitions).toHaveLength(6); // default 30d
    for (const [q, name] of [
      ["limit=0", "limit"],
      ["limit=201", "limit"],
      ["limit=abc", "limit"],
      ["limit=-1", "limit"],
      ["window=1y", "window"],
      ["window=", "window"],
      ["since=1", "since"],
    ]) {
      const r = await get<ErrorBody>(`/api/public-status-history?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error, q).toMatch(new RegExp(`^Invalid parameter ${name}: `));
    }
    expect((await get<ErrorBody>("/api/public-status-history?limit=0")).body.error).toBe(
      "Invalid parameter limit: must be an integer from 1 to 200",
    );
    expect((await get("/api/public-status-history", null)).status).toBe(401);
  });

  it("the store cannot be read (status tables locked): 503 Public status history unavailable, no-store, within 1 s; health still answers", async () => {
    await withLock("status_transitions", async () => {
      const r = await get("/api/public-status-history");
      expect(r.status).toBe(503);
      expect(r.body).toEqual(UNAVAILABLE);
      expect(r.headers.get("cache-control")).toBe("no-store");
      expect(r.headers.get("retry-after")).toBe("60");
      expect(r.ms).toBeLessThan(10_000); // answered while the lock is still held: the read gave up, it did not wait
    });
    await withLock("status_state", async () => {
      expect((await get("/api/public-status-history")).body).toEqual(UNAVAILABLE);
    });
    expect((await get("/api/public-status-history")).status).toBe(200);
  });

  it("a failing write is reported in health, kept, and written in order once the store answers", async () => {
    publish("b7", T0 + 2 * 86400 + 9100);
    const before = (await stored()).length;
    await withLock("status_state", async () => {
      for (const dt of [2 * 86400 + 9300, 2 * 86400 + 9360, 2 * 86400 + 9420]) await tick(dt);
      expect(recorder.status()).toMatchObject({
        state: "unavailable",
        pendingObservations: 3,
        lastRecordedAt: T0 + 2 * 86400 + 9000,
      });
      const health = await get<Health>("/api/health", null);
      expect(health.status).toBe(200);
      expect(health.ms).toBeLessThan(10_000); // answered while the lock is still held
      expect(health.body.statusHistory).toMatchObject({
        state: "unavailable",
        pendingObservations: 3,
        lastError: expect.stringMatching(/^status history: /),
      });
      expect(
        health.body.warnings.some((w) => w.startsWith("status history recording failing (no effect on status)")),
      ).toBe(true);
      expect(health.body.status).toBe("healthy");
    });
    expect((await stored()).length).toBe(before);
    await tick(2 * 86400 + 9480);
    expect(recorder.status()).toMatchObject({
      state: "ok",
      pendingObservations: 0,
      lastRecordedAt: T0 + 2 * 86400 + 9480,
    });
    // the observations made during the outage count, at their own time: the third healthy in a row
    // (9420, 420 s in stale) recovered it, though it was written only at 9480
    expect((await stored()).slice(before)).toEqual([[2 * 86400 + 9420, "stale → healthy"]]);
    const { rows } = await admin.query(
      `select version::int as v, last_evaluated_at::bigint - ${T0} as dt from ${schema.name}.status_state`,
    );
    expect(Number(rows[0].dt)).toBe(2 * 86400 + 9480);
  });

  it("this test's connections terminated: the route and the recorder reconnect", async () => {
    const { rows } = await admin.query(
      "select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1) t",
      [APP],
    );
    expect(rows[0].n).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 100));
    expect((await get("/api/public-status-history")).status).toBe(200);
    await tick(2 * 86400 + 9540);
    expect(recorder.status().state).toBe("ok");
  });
});

describe("several instances sharing Postgres", () => {
  it("observations of the same moment count once and no transition is written twice", async () => {
    const other = await openSqlClient({ databaseUrl: `${schema.url}&application_name=${APP}_b`, pgliteDir: "" });
    try {
      const a = new StatusHistoryStore(sql, { scope: "race" });
      const b = new StatusHistoryStore(other, { scope: "race" });
      const seq: StatusObservation[] = [
        "healthy",
        "stale",
        "stale",
        "degraded",
        "degraded",
        "degraded",
        "healthy",
        "healthy",
        "healthy",
        "healthy",
        "stale",
        "healthy",
      ].map((raw, i) => ({
        raw: raw as StatusObservation["raw"],
        causes:
          raw === "healthy"
            ? []
            : [{ code: "cache:stablecoins", status: raw as "stale", publicImpact: true, detail: "x" }],
        at: T0 + 60 * (i + 1),
      }));
      // both instances record every observation at the same time
      for (const obs of seq)
        await Promise.all([a.record([obs], { minSpacingSec: 30 }), b.record([obs], { minSpacingSec: 30 })]);
      // what one writer would have recorded
      let state: StatusState | null = null;
      const expected: string[] = [];
      for (const obs of seq) {
        const ev = evaluate(state, obs);
        state = ev.state;
        if (ev.transition) expected.push(`${ev.transition.from} → ${ev.transition.to} @${obs.at - T0}`);
      }
      const { rows } = await admin.query(
        `select previous_status, next_status, created_at::bigint - ${T0} as dt from ${schema.name}.status_transitions where scope = 'race' order by created_at, id`,
      );
      expect(rows.map((r) => `${r.previous_status} → ${r.next_status} @${r.dt}`)).toEqual(expected);
      expect(expected.length).toBeGreaterThanOrEqual(4);
      const st = (
        await admin.query(
          `select version::int as v, consecutive_healthy from ${schema.name}.status_state where scope = 'race'`,
        )
      ).rows[0];
      expect(st.v).toBe(seq.length); // one write per observation, whoever won
      // an observation older than the state's latest never rewinds it
      expect((await a.record([{ ...seq[0], at: T0 }])).written).toBe(0);
    } finally {
      await other.close();
    }
  });
});

describe("the embedded default (PGlite)", () => {
  it("runs the same schema, compare-and-set writes and public query", async () => {
    const pgliteDir = mkdtempSync(join(tmpdir(), "ballast-status-pglite-"));
    const lite = await openSqlClient({ pgliteDir });
    try {
      const store = new StatusHistoryStore(lite);
      const cause = { code: "cache:stablecoins", status: "stale" as const, publicImpact: true, detail: "x" };
      const res = await store.record(
        [
          { raw: "healthy", causes: [], at: T0 },
          { raw: "stale", causes: [cause], at: T0 + 60 },
          { raw: "healthy", causes: [], at: T0 + 120 },
        ],
        { minSpacingSec: 30 },
      );
      expect(res.transitions.map((t) => `${t.from} → ${t.to}`)).toEqual(["null → healthy", "healthy → stale"]);
      const h = await store.publicHistory({ wallNow: T0 + 130, windowSec: 86400, limit: 50 });
      expect(h.state).toMatchObject({
        currentStatus: "stale",
        lastChangedAt: T0 + 60,
        lastEvaluatedAt: T0 + 120,
        version: 1,
        consecutive: { healthy: 1 },
      });
      expect(h.transitions).toEqual([
        expect.objectContaining({ from: "healthy", to: "stale", causes: [cause], at: T0 + 60 }),
      ]);
    } finally {
      await lite.close();
      rmSync(pgliteDir, { recursive: true, force: true });
    }
  });
});

describe("the server process wiring (startServer)", () => {
  it("records on its timer from start, reports it in health, serves the route, and stops recording on close", async () => {
    const own = await createTestSchema("ballast_status_srv");
    const srvDir = mkdtempSync(join(tmpdir(), "ballast-status-srv-"));
    publish("s1", Math.floor(Date.now() / 1000), { into: srvDir });
    const srv = await startServer(
      loadApiConfig({
        PORT: "0",
        HOST: "127.0.0.1",
        BALLAST_DATA_DIR: srvDir,
        DATABASE_URL: `${own.url}&application_name=${APP}_srv`,
        API_KEY_PEPPER: PEPPER,
        STATUS_RECORD_INTERVAL_SEC: "1",
      }),
    );
    try {
      const base = `http://127.0.0.1:${srv.port}`;
      const t0 = Date.now();
      while (srv.statusRecorder.status().lastRecordedAt === null && Date.now() - t0 < 60_000)
        await new Promise((r) => setTimeout(r, 50));
      expect(srv.statusRecorder.status()).toMatchObject({ state: "ok", intervalSec: 1 });
      const health = await (await fetch(`${base}/api/health`)).json();
      expect(health.statusHistory).toMatchObject({ state: "ok", intervalSec: 1 });
      expect(health.caches["yield-data"]).toMatchObject({
        ageSeconds: null,
        healthy: false,
        sentinelValidationReason: "not-published",
      });
      const key = (await srv.keys.create({ name: "srv" })).token;
      const r = await fetch(`${base}/api/public-status-history?limit=5`, { headers: { "X-API-Key": key } });
      expect(r.status).toBe(200);
      const body = await r.json();
      expect(body.currentStatus).toBe(health.status);
      expect(body.lastChangedAt).toEqual(expect.any(Number));
    } finally {
      await srv.close();
    }
    try {
      const version = async () =>
        Number((await admin.query(`select version from ${own.name}.status_state`)).rows[0].version);
      const v = await version();
      await new Promise((r) => setTimeout(r, 1500));
      expect(await version()).toBe(v); // no timer left running after close
    } finally {
      await own.drop();
      rmSync(srvDir, { recursive: true, force: true });
    }
  });
});
