import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { apiLog, errorMessage } from "./log.ts";

/** Literal prefix of Ballast API keys (spec 5.1 with `bl_live`): `bl_live_<16 hex>_<32 base64url>`. */
export const API_KEY_PATTERN = /^bl_live_([0-9a-f]{16})_([A-Za-z0-9_-]{32})$/;

/** Tiers a stored key can carry (reference 4.2): operator-issued, supporter, retired self-serve. */
export const KEY_TIERS = ["standard", "donor", "self-serve"] as const;
/** Tiers `KeyStore.create` issues; self-serve issuance is retired (spec 5.3). */
export const ISSUABLE_TIERS = ["standard", "donor"] as const;
export type IssuableTier = (typeof ISSUABLE_TIERS)[number];
/** Per-key limit bounds and default, requests per 60 s. */
export const RATE_LIMIT_MIN = 1;
export const RATE_LIMIT_MAX = 10_000;
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 120;
/** Default deadline (ms) of one key lookup, of connecting and of one statement on Postgres. */
export const DEFAULT_STATE_TIMEOUT_MS = 300;
/** Default `application_name` of the API's Postgres connections (visible in pg_stat_activity). */
export const DEFAULT_APPLICATION_NAME = "ballast-api";

/**
 * The state store did not answer in time or could not be reached (connection refused, terminated,
 * timed out, statement cancelled). Callers answer 503 `Public API temporarily unavailable`.
 * `cause` holds the driver error when there is one.
 */
export class StateStoreUnavailableError extends Error {
  override readonly name = "StateStoreUnavailableError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Invalid input to `create` (name, tier, rate limit, owner email, expiry); `field` names the input. */
export class KeyInputError extends Error {
  override readonly name = "KeyInputError";
  constructor(readonly field: "name" | "tier" | "rateLimitPerMinute" | "ownerEmail" | "expiresAt", message: string) {
    super(message);
  }
}

/** Minimal query surface shared by PGlite and node-postgres. */
export interface SqlClient {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
  close(): Promise<void>;
}

/** A stored key: never the secret, only its keyed hash. `rateLimitPerMinute` requests per 60 s. */
export interface ApiKeyRecord {
  id: string;
  keyPrefix: string;
  name: string;
  tier: string;
  rateLimitPerMinute: number;
  isActive: boolean;
  /** Unix seconds, or null for no expiry. */
  expiresAt: number | null;
}

/** A key as listed for operators: the record plus owner, creation time (Unix s) and a masked token `bl_live_<prefix>_…`. */
export interface ApiKeyListing extends ApiKeyRecord {
  ownerEmail: string | null;
  createdAt: number;
  maskedToken: string;
}

/** Input of `create`; `rateLimitPerMinute` may be a decimal string (CLI flags). */
export interface NewKeyInput {
  name: string;
  tier?: string;
  rateLimitPerMinute?: number | string;
  ownerEmail?: string | null;
  /** Unix seconds, or null/undefined for no expiry. */
  expiresAt?: number | null;
}

/** `NewKeyInput` after validation: trimmed name, known tier, integer limit, lower-cased email. */
export interface ValidKeyInput {
  name: string;
  tier: IssuableTier;
  rateLimitPerMinute: number;
  ownerEmail: string | null;
  expiresAt: number | null;
}

/** Health of the state store as seen by this process: the outcome of the latest operation. */
export interface KeyStoreStatus {
  /** `ok` until an operation fails; `unavailable` until one succeeds again. */
  state: "ok" | "unavailable";
  /** Message of the latest failure, null once an operation succeeded after it. */
  lastError: string | null;
  /** Unix seconds of the latest successful operation, null before the first. */
  lastOkAt: number | null;
}

/** Deadlines of `KeyStore` calls (ms). */
export interface KeyStoreOptions {
  /** Overall deadline of one `verify` / `check`, schema creation included; default 300. */
  verifyDeadlineMs?: number;
  /** Deadline of `init` and the management calls (`create`, `list`, `rotate`, `deactivate`); default 5000. */
  adminDeadlineMs?: number;
}

const SCHEMA = `
create table if not exists api_keys (
  id text primary key,
  key_prefix text not null unique,
  secret_hash text not null,
  name text not null,
  owner_email text,
  tier text not null default 'standard',
  rate_limit_per_minute integer not null default 120,
  is_active boolean not null default true,
  expires_at bigint,
  created_at bigint not null
)`;

type KeyRow = { id: string; key_prefix: string; secret_hash: string; name: string; owner_email: string | null; tier: string; rate_limit_per_minute: number; is_active: boolean; expires_at: string | number | null; created_at: string | number };
const COLUMNS = "id, key_prefix, secret_hash, name, owner_email, tier, rate_limit_per_minute, is_active, expires_at, created_at";

const nowSec = () => Math.floor(Date.now() / 1000);

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id, keyPrefix: row.key_prefix, name: row.name, tier: row.tier, rateLimitPerMinute: Number(row.rate_limit_per_minute),
    isActive: row.is_active, expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  };
}

/** Masked display form of a key: `bl_live_<prefix>_…` (the secret is never stored). */
export function maskToken(keyPrefix: string): string {
  return `bl_live_${keyPrefix}_…`;
}

/**
 * Validates and normalizes a new key (reference 4.1): name 1–80 chars after trimming; tier one of
 * `ISSUABLE_TIERS` (default `standard`); rate limit an integer 1–10000 requests per minute (default
 * 120); owner email ≤ 200 chars, lower-cased; expiry a positive integer Unix second or null.
 * `maxRateLimitPerMinute` raises the upper bound (development keys of benchmarks; ≤ 2^31 − 1).
 * @throws KeyInputError naming the first invalid field.
 */
export function validateKeyInput(input: NewKeyInput, maxRateLimitPerMinute = RATE_LIMIT_MAX): ValidKeyInput {
  const name = (input.name ?? "").trim();
  if (!name || name.length > 80) throw new KeyInputError("name", `Invalid name ${JSON.stringify(input.name ?? "")}: expected 1 to 80 characters`);
  const tier = input.tier ?? "standard";
  if (!(ISSUABLE_TIERS as readonly string[]).includes(tier)) {
    throw new KeyInputError("tier", `Invalid tier ${JSON.stringify(tier)}: expected one of ${ISSUABLE_TIERS.join(", ")} (self-serve issuance is retired)`);
  }
  const rawLimit = input.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE;
  const limit = typeof rawLimit === "string" ? (/^\s*\d+\s*$/.test(rawLimit) ? Number(rawLimit) : Number.NaN) : rawLimit;
  const max = Math.min(maxRateLimitPerMinute, 2_147_483_647);
  if (!Number.isInteger(limit) || limit < RATE_LIMIT_MIN || limit > max) {
    throw new KeyInputError("rateLimitPerMinute", `Invalid rate limit ${JSON.stringify(rawLimit)}: expected an integer from ${RATE_LIMIT_MIN} to ${max} requests per minute`);
  }
  const email = input.ownerEmail?.trim().toLowerCase() || null;
  if (email !== null && (email.length > 200 || !/^[^\s@]+@[^\s@]+$/.test(email))) {
    throw new KeyInputError("ownerEmail", `Invalid owner email ${JSON.stringify(input.ownerEmail)}: expected an address of at most 200 characters`);
  }
  const expiresAt = input.expiresAt ?? null;
  if (expiresAt !== null && (!Number.isSafeInteger(expiresAt) || expiresAt <= 0)) {
    throw new KeyInputError("expiresAt", `Invalid expiry ${JSON.stringify(expiresAt)}: expected a positive integer Unix second or none`);
  }
  return { name, tier: tier as IssuableTier, rateLimitPerMinute: limit, ownerEmail: email, expiresAt };
}

/** A dropped or reset connection (worth one retry of an idempotent read on a fresh connection). */
function isConnectionLoss(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === "57P01" || e?.code === "ECONNRESET" || e?.code === "EPIPE" || /Connection terminated|terminating connection/i.test(e?.message ?? "");
}

/**
 * API keys in the state store (PGlite by default, Postgres via DATABASE_URL). Only the prefix and
 * HMAC-SHA256(pepper, secret) are stored; the plaintext token is returned once by `create`/`rotate`.
 *
 * Every call runs under a deadline and throws `StateStoreUnavailableError` when the store does not
 * answer in time or cannot be reached; the schema is created by the first call that reaches the
 * store (so `init` never throws for an unreachable database, and the store heals on the next use).
 * `status()` reports the outcome of the latest call.
 */
export class KeyStore {
  private readonly verifyDeadlineMs: number;
  private readonly adminDeadlineMs: number;
  private schemaReady: Promise<void> | null = null;
  private current: KeyStoreStatus = { state: "ok", lastError: null, lastOkAt: null };

  constructor(private readonly sql: SqlClient, private readonly pepper: string, opts: KeyStoreOptions = {}) {
    this.verifyDeadlineMs = opts.verifyDeadlineMs ?? DEFAULT_STATE_TIMEOUT_MS;
    this.adminDeadlineMs = opts.adminDeadlineMs ?? 5000;
  }

  /**
   * Creates the schema when the store is reachable. Never throws: a failure is recorded in
   * `status()` and the schema is created by the next call that reaches the store.
   */
  async init(): Promise<KeyStoreStatus> {
    await this.run("init", this.adminDeadlineMs, false, async () => undefined).catch(() => undefined);
    return this.status();
  }

  /** Outcome of the latest call (copy). `lastOkAt` in Unix seconds. */
  status(): KeyStoreStatus {
    return { ...this.current };
  }

  /** Probes the store (`select 1`, schema creation when pending) under the verify deadline; never throws. */
  async check(): Promise<KeyStoreStatus> {
    await this.run("check", this.verifyDeadlineMs, true, async () => { await this.sql.query("select 1"); }).catch(() => undefined);
    return this.status();
  }

  /**
   * The state store's SQL client, shared with the other tables of the state store (status history):
   * one pool per process, and the embedded PGlite can be opened only once. Closed by `close()`.
   */
  get sqlClient(): SqlClient {
    return this.sql;
  }

  /** Closes the underlying SQL client (pool or PGlite). */
  close(): Promise<void> {
    return this.sql.close();
  }

  private hash(secret: string): string {
    return createHmac("sha256", this.pepper).update(secret).digest("hex");
  }

  private ensureSchema(): Promise<void> {
    this.schemaReady ??= this.sql.query(SCHEMA).then(() => undefined, (err: unknown) => {
      this.schemaReady = null;
      throw err;
    });
    return this.schemaReady;
  }

  private markOk(): void {
    if (this.current.state === "unavailable") apiLog("info", "state-store", "state store available again");
    this.current = { state: "ok", lastError: null, lastOkAt: nowSec() };
  }

  private markFailed(err: StateStoreUnavailableError): void {
    if (this.current.state === "ok") apiLog("warn", "state-store", "state store unavailable; keyed requests answer 503 until it is back", { error: err.message });
    this.current = { ...this.current, state: "unavailable", lastError: err.message };
  }

  /**
   * Runs `op` after the schema is ready, racing a `deadlineMs` timer. Idempotent reads (`retry`)
   * are retried once on a dropped connection while the deadline lasts.
   * @throws StateStoreUnavailableError on timeout or any store failure.
   */
  private async run<T>(what: string, deadlineMs: number, retry: boolean, op: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StateStoreUnavailableError(`state store: ${what} got no answer within ${deadlineMs} ms`)), deadlineMs);
    });
    const attempt = async () => { await this.ensureSchema(); return op(); };
    const work = attempt().catch((err: unknown) => (retry && isConnectionLoss(err) ? attempt() : Promise.reject(err)));
    try {
      const out = await Promise.race([work, deadline]);
      this.markOk();
      return out;
    } catch (err) {
      const e = err instanceof StateStoreUnavailableError ? err : new StateStoreUnavailableError(`state store: ${what} failed: ${errorMessage(err)}`, { cause: err });
      this.markFailed(e);
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Creates a key and returns its record plus the plaintext token (shown once).
   * `opts.maxRateLimitPerMinute` lifts the 10000 bound (development key only).
   * @throws KeyInputError on invalid input (see `validateKeyInput`); StateStoreUnavailableError.
   */
  async create(input: NewKeyInput, opts: { maxRateLimitPerMinute?: number } = {}): Promise<{ record: ApiKeyRecord; token: string }> {
    const v = validateKeyInput(input, opts.maxRateLimitPerMinute);
    const prefix = randomBytes(8).toString("hex");
    const secret = randomBytes(24).toString("base64url");
    const id = randomUUID();
    await this.run("create", this.adminDeadlineMs, false, () => this.sql.query(
      "insert into api_keys (id, key_prefix, secret_hash, name, owner_email, tier, rate_limit_per_minute, expires_at, created_at) values ($1,$2,$3,$4,$5,$6,$7,$8,$9)",
      [id, prefix, this.hash(secret), v.name, v.ownerEmail, v.tier, v.rateLimitPerMinute, v.expiresAt, nowSec()],
    ));
    return {
      record: { id, keyPrefix: prefix, name: v.name, tier: v.tier, rateLimitPerMinute: v.rateLimitPerMinute, isActive: true, expiresAt: v.expiresAt },
      token: `bl_live_${prefix}_${secret}`,
    };
  }

  /**
   * Verifies a token (`nowSec` Unix seconds): shape, prefix lookup, constant-time hash comparison,
   * active, not expired. Returns the record or null (unknown, wrong secret, inactive, expired).
   * @throws StateStoreUnavailableError when the store does not answer within the verify deadline
   * (default 300 ms) or cannot be reached; callers answer 503.
   */
  async verify(token: string, nowSec: number): Promise<ApiKeyRecord | null> {
    const m = API_KEY_PATTERN.exec(token);
    if (!m) return null;
    const { rows } = await this.run("verify", this.verifyDeadlineMs, true, () => this.sql.query<KeyRow>(`select ${COLUMNS} from api_keys where key_prefix = $1`, [m[1]]));
    const row = rows[0];
    if (!row) return null;
    const a = Buffer.from(row.secret_hash, "hex");
    const b = Buffer.from(this.hash(m[2]), "hex");
    if (a.length !== b.length || !timingSafeEqual(a, b)) return null;
    const record = toRecord(row);
    if (!record.isActive || (record.expiresAt !== null && record.expiresAt <= nowSec)) return null;
    return record;
  }

  /** Every key, oldest first, without secrets or hashes. @throws StateStoreUnavailableError. */
  async list(): Promise<ApiKeyListing[]> {
    const { rows } = await this.run("list", this.adminDeadlineMs, true, () => this.sql.query<KeyRow>(`select ${COLUMNS} from api_keys order by created_at, id`));
    return rows.map((row) => ({ ...toRecord(row), ownerEmail: row.owner_email, createdAt: Number(row.created_at), maskedToken: maskToken(row.key_prefix) }));
  }

  /**
   * Sets isActive false. Returns false when no key has that id. The key stops working at once in
   * the store; API instances may still accept it from their verification cache (≤ 5 s).
   * @throws StateStoreUnavailableError.
   */
  async deactivate(id: string): Promise<boolean> {
    const res = await this.run("deactivate", this.adminDeadlineMs, false, () => this.sql.query("update api_keys set is_active = false where id = $1 returning id", [id]));
    return res.rows.length > 0;
  }

  /**
   * Replaces the prefix and secret of an active key (same id, name, tier and limit) and returns the
   * new plaintext token (shown once); the old token stops verifying at once. Null when no active
   * key has that id. @throws StateStoreUnavailableError.
   */
  async rotate(id: string): Promise<{ record: ApiKeyRecord; token: string } | null> {
    const prefix = randomBytes(8).toString("hex");
    const secret = randomBytes(24).toString("base64url");
    const { rows } = await this.run("rotate", this.adminDeadlineMs, false, () => this.sql.query<KeyRow>(
      `update api_keys set key_prefix = $2, secret_hash = $3 where id = $1 and is_active returning ${COLUMNS}`,
      [id, prefix, this.hash(secret)],
    ));
    return rows[0] ? { record: toRecord(rows[0]), token: `bl_live_${prefix}_${secret}` } : null;
  }
}

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
 * Opens the state store: Postgres when `databaseUrl` is set, else PGlite in `pgliteDir`.
 * Postgres never connects here: the pool is created by the first query, so opening succeeds while
 * the database is down. Connection errors (idle connection terminated, server restart) are logged
 * and never crash the process; the pool reconnects on the next query.
 */
export async function openSqlClient(opts: SqlClientOptions): Promise<SqlClient> {
  if (opts.databaseUrl) {
    const { default: pg } = await import("pg");
    const timeout = opts.queryTimeoutMs ?? DEFAULT_STATE_TIMEOUT_MS;
    let pool: InstanceType<typeof pg.Pool> | undefined;
    const getPool = () => {
      if (pool) return pool;
      const p = new pg.Pool({
        connectionString: opts.databaseUrl,
        max: opts.maxConnections ?? 4,
        application_name: opts.applicationName ?? DEFAULT_APPLICATION_NAME,
        connectionTimeoutMillis: opts.connectTimeoutMs ?? DEFAULT_STATE_TIMEOUT_MS,
        query_timeout: timeout,
        statement_timeout: timeout,
        keepAlive: true,
        idleTimeoutMillis: 30_000,
      });
      // An idle connection that dies (pg_terminate_backend, server restart) emits `error` on the
      // pool, which drops it; without this listener the process would crash.
      p.on("error", (err) => apiLog("warn", "state-store", "idle Postgres connection lost; the pool reconnects on the next query", { error: errorMessage(err), code: (err as { code?: string }).code ?? null }));
      // Errors of a checked-out connection reject its query; this guard only keeps a late socket
      // error on any connection from becoming an uncaught exception.
      p.on("connect", (client) => { client.on("error", () => undefined); });
      pool = p;
      return p;
    };
    return {
      query: (sql, params) => getPool().query(sql, params as unknown[]) as never,
      close: async () => {
        const p = pool;
        pool = undefined;
        await p?.end();
      },
    };
  }
  const { PGlite } = await import("@electric-sql/pglite");
  const db = await PGlite.create(opts.pgliteDir);
  return { query: (sql, params) => db.query(sql, params as unknown[]) as never, close: () => db.close() };
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
  dataDir: string;
  applicationName?: string;
  /** Connect, statement and verify deadline; default 300. */
  timeoutMs?: number;
  /** Deadline of init and management calls; default 5000. */
  adminDeadlineMs?: number;
}

/**
 * Opens the key store the way the server configures it (DATABASE_URL + API_KEY_PEPPER, else PGlite
 * and its pepper file under `<dataDir>/state`) and runs `init` (which never throws for an unreachable
 * Postgres; see `status()`). Close it with `keys.close()`.
 * @throws Error when `databaseUrl` is set without `pepper`; PGlite open errors.
 */
export async function openKeyStore(cfg: KeyStoreConfig): Promise<KeyStore> {
  if (cfg.databaseUrl && !cfg.pepper) throw new Error("API_KEY_PEPPER is required with DATABASE_URL");
  const pgliteDir = join(cfg.dataDir, "state", "pglite");
  if (!cfg.databaseUrl) mkdirSync(join(cfg.dataDir, "state"), { recursive: true });
  const timeoutMs = cfg.timeoutMs ?? DEFAULT_STATE_TIMEOUT_MS;
  const sql = await openSqlClient({ databaseUrl: cfg.databaseUrl, pgliteDir, applicationName: cfg.applicationName, connectTimeoutMs: timeoutMs, queryTimeoutMs: timeoutMs });
  const keys = new KeyStore(sql, cfg.pepper ?? embeddedPepper(cfg.dataDir), { verifyDeadlineMs: timeoutMs, adminDeadlineMs: cfg.adminDeadlineMs });
  await keys.init();
  return keys;
}
