import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import type { CircuitBreakerOptions } from "../circuit-breaker.ts";
import type { Listen } from "../key-coherence.ts";
import { apiLog, errorMessage } from "../log.ts";
import { DEFAULT_APPLICATION_NAME, DEFAULT_STATE_TIMEOUT_MS } from "./records.ts";
import type { SqlClient } from "./schema.ts";
import { KeyStore } from "./store.ts";

/** Connection settings of `openSqlClient`. Timeouts in ms. */
export interface SqlClientOptions {
  /** Postgres URL; PGlite in `pgliteDir` when unset. A URL `application_name` parameter wins over `applicationName`. */
  databaseUrl?: string;
  pgliteDir: string;
  /** Postgres `application_name`; default `ballast-api`. */
  applicationName?: string;
  /** Postgres: wait for a connection (new or from the pool); default 300. */
  connectTimeoutMs?: number;
  /** Postgres: client-side `query_timeout` and server-side `statement_timeout`; default 300. */
  queryTimeoutMs?: number;
  /** Postgres pool size; default 4. */
  maxConnections?: number;
}

/**
 * Settings of the embedded Postgres (PGlite) that keep its WebAssembly memory small; a state store of
 * keys, claims and small tables needs no more. Measured (tsx process, 20k-row table): reopen RSS 250 MB
 * with them against 364 MB with PGlite's defaults; `shared_buffers` 8 MB rather than 16 MB saves
 * another 8 MiB of touched WebAssembly memory.
 */
const PGLITE_CONF = [
  "shared_buffers=8MB",
  "work_mem=2MB",
  "maintenance_work_mem=8MB",
  "temp_buffers=2MB",
  "wal_buffers=1MB",
];

/**
 * Makes V8 compile WebAssembly with its baseline compiler only (Liftoff; V8 flag `--liftoff-only`),
 * before PGlite's module is compiled. PGlite is the only WebAssembly of the API process, and its
 * optimising tier-up (TurboFan) compiles Postgres' large functions on background threads whose
 * malloc arenas stay resident: measured, the server's RSS at start 246-261 MB with it against
 * 297-352 MB without. State store statements are not on the request path (verified keys are cached);
 * Liftoff code runs a keyed select in ~0.75 ms against ~0.4-1.0 ms once tiered up, and pays no
 * tier-up compilation. Process-wide: any WebAssembly compiled later in the process is Liftoff too.
 */
function useBaselineWasmCompiler(): void {
  setFlagsFromString("--liftoff-only");
}

/**
 * Creates a PGlite data directory in a short-lived child process: `initdb` grows PGlite's WebAssembly
 * memory to about 800 MB, which a process never gives back, so the server only ever opens an
 * existing directory. @throws Error with the child's stderr when it fails.
 */
async function initPgliteDir(dir: string): Promise<void> {
  const { execFile } = await import("node:child_process");
  const module = import.meta.resolve("@electric-sql/pglite");
  const script = `const { PGlite } = await import(${JSON.stringify(module)}); const db = await PGlite.create(${JSON.stringify(dir)}, { postgresqlconf: ${JSON.stringify(PGLITE_CONF)} }); await db.close();`;
  await new Promise<void>((resolve, reject) => {
    execFile(process.execPath, ["--input-type=module", "-e", script], { timeout: 120_000 }, (err, _out, stderr) =>
      err ? reject(new Error(`PGlite initdb in ${dir} failed: ${stderr || err.message}`)) : resolve(),
    );
  });
}

/**
 * Opens the state store: Postgres when `databaseUrl` is set, else PGlite in `pgliteDir`.
 * Postgres never connects here: the pool is created by the first query, so opening succeeds while
 * the database is down. Connection errors (idle connection terminated, server restart) are logged
 * and never crash the process; the pool reconnects on the next query. The Postgres client also
 * offers `listen` (a dedicated LISTEN session for cache coherence, same application_name; its
 * statements time out after 1 s or the query timeout, whichever is longer).
 */
export async function openSqlClient(opts: SqlClientOptions): Promise<SqlClient> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts);
  const onDisk = opts.pgliteDir !== "" && !opts.pgliteDir.includes("://");
  if (onDisk && !existsSync(join(opts.pgliteDir, "PG_VERSION"))) await initPgliteDir(opts.pgliteDir);
  useBaselineWasmCompiler();
  const { PGlite } = await import("@electric-sql/pglite");
  const db = await PGlite.create(opts.pgliteDir, { postgresqlconf: PGLITE_CONF });
  return {
    kind: "pglite",
    query: (sql, params) => db.query(sql, params as unknown[]) as never,
    exec: async (sql) => {
      await db.exec(sql);
    },
    close: () => db.close(),
  };
}

/** The Postgres client of `openSqlClient` (see there): a lazily created pool, and `listen` sessions. */
async function openPostgres(databaseUrl: string, opts: SqlClientOptions): Promise<SqlClient> {
  const { default: pg } = await import("pg");
  const timeout = opts.queryTimeoutMs ?? DEFAULT_STATE_TIMEOUT_MS;
  const applicationName = opts.applicationName ?? DEFAULT_APPLICATION_NAME;
  const connectTimeout = opts.connectTimeoutMs ?? DEFAULT_STATE_TIMEOUT_MS;
  let pool: InstanceType<typeof pg.Pool> | undefined;
  const getPool = () => {
    if (pool) return pool;
    const p = new pg.Pool({
      connectionString: databaseUrl,
      max: opts.maxConnections ?? 4,
      application_name: applicationName,
      connectionTimeoutMillis: connectTimeout,
      query_timeout: timeout,
      statement_timeout: timeout,
      keepAlive: true,
      idleTimeoutMillis: 30_000,
    });
    // An idle connection that dies (pg_terminate_backend, server restart) emits `error` on the
    // pool, which drops it; without this listener the process would crash.
    p.on("error", (err) =>
      apiLog("warn", "state-store", "idle Postgres connection lost; the pool reconnects on the next query", {
        error: errorMessage(err),
        code: (err as { code?: string }).code ?? null,
      }),
    );
    // Errors of a checked-out connection reject its query; this guard only keeps a late socket
    // error on any connection from becoming an uncaught exception.
    p.on("connect", (client) => {
      client.on("error", () => undefined);
    });
    pool = p;
    return p;
  };
  const listen: Listen = async (channel, onNotify, onLost) => {
    const sessionTimeout = Math.max(timeout, 1000);
    const client = new pg.Client({
      connectionString: databaseUrl,
      application_name: applicationName,
      connectionTimeoutMillis: Math.max(connectTimeout, 1000),
      query_timeout: sessionTimeout,
      statement_timeout: sessionTimeout,
      keepAlive: true,
    });
    let ready = false;
    let over = false;
    const lost = (err: unknown) => {
      if (!ready || over) return;
      over = true;
      onLost(err);
    };
    client.on("error", lost);
    client.on("end", () => lost(new Error("Connection terminated")));
    client.on("notification", (n) => {
      if (n.channel === channel) onNotify(n.payload ?? "");
    });
    try {
      await client.connect();
      await client.query(`listen ${channel}`);
    } catch (err) {
      over = true;
      await client.end().catch(() => undefined);
      throw err;
    }
    ready = true;
    return {
      query: (sql, params) => client.query(sql, params as unknown[]) as never,
      close: async () => {
        over = true;
        await client.end().catch(() => undefined);
      },
    };
  };
  return {
    kind: "postgres",
    query: (sql, params) => getPool().query(sql, params as unknown[]) as never,
    exec: async (sql) => {
      await getPool().query(sql);
    },
    listen,
    close: async () => {
      const p = pool;
      pool = undefined;
      await p?.end();
    },
  };
}

/** Pepper of the embedded default: 32 random bytes (hex) created once in `<dataDir>/state/pepper` (mode 0600). */
export function embeddedPepper(dataDir: string): string {
  const dir = join(dataDir, "state");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "pepper");
  if (!existsSync(path)) writeFileSync(path, randomBytes(32).toString("hex"), { mode: 0o600 });
  return readFileSync(path, "utf8").trim();
}

/** Settings of `openKeyStore`, shared by the server and the key CLI. Timeouts in ms. */
export interface KeyStoreConfig {
  /** Postgres URL; embedded PGlite under `<dataDir>/state/pglite` when unset. */
  databaseUrl?: string;
  /** HMAC pepper; required with `databaseUrl`, else the embedded pepper file is used. */
  pepper?: string;
  /** The previous pepper during a pepper rotation (keys hashed with it are re-hashed on use). */
  previousPepper?: string;
  dataDir: string;
  applicationName?: string;
  /** Connect, statement and verify deadline; default 300. */
  timeoutMs?: number;
  /** Deadline of init and management calls; default 5000. */
  adminDeadlineMs?: number;
  /**
   * Keep verified standard keys in memory (the server): `exclusive` on the embedded store (the
   * caller must own it, see api/lib/embedded-store.ts), `shared` (LISTEN/NOTIFY leases) on Postgres.
   * Default false (the CLI): every verification asks the store.
   */
  cache?: boolean;
  /** Breaker settings (default 5 s cool-down). */
  breaker?: CircuitBreakerOptions;
}

/**
 * Opens the key store the way the server configures it (DATABASE_URL + API_KEY_PEPPER, else PGlite
 * and its pepper file under `<dataDir>/state`) and runs `init` (which never throws for an unreachable
 * Postgres; see `status()`). The embedded store must be opened by one process at a time: callers
 * hold the lock of api/lib/embedded-store.ts. Close it with `keys.close()`.
 * @throws Error when `databaseUrl` is set without `pepper`; PGlite open errors.
 */
export async function openKeyStore(cfg: KeyStoreConfig): Promise<KeyStore> {
  if (cfg.databaseUrl && !cfg.pepper) throw new Error("API_KEY_PEPPER is required with DATABASE_URL");
  const pgliteDir = join(cfg.dataDir, "state", "pglite");
  if (!cfg.databaseUrl) mkdirSync(join(cfg.dataDir, "state"), { recursive: true });
  const timeoutMs = cfg.timeoutMs ?? DEFAULT_STATE_TIMEOUT_MS;
  const sql = await openSqlClient({
    databaseUrl: cfg.databaseUrl,
    pgliteDir,
    applicationName: cfg.applicationName,
    connectTimeoutMs: timeoutMs,
    queryTimeoutMs: timeoutMs,
  });
  const current = cfg.pepper ?? embeddedPepper(cfg.dataDir);
  const keys = new KeyStore(
    sql,
    { current, previous: cfg.previousPepper },
    {
      verifyDeadlineMs: timeoutMs,
      adminDeadlineMs: cfg.adminDeadlineMs,
      breaker: cfg.breaker,
      cacheMode: cfg.cache ? (cfg.databaseUrl ? "shared" : "exclusive") : "none",
    },
  );
  await keys.init();
  return keys;
}
