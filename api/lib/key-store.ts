import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { CircuitBreaker, type CircuitBreakerOptions, type CircuitState } from "./circuit-breaker.ts";
import { type DependencyReason, dependencyReason } from "./dependency-reason.ts";
import { DEFAULT_LEASE_MS, KEY_CHANGES_CHANNEL, KeyCoherence, type Listen } from "./key-coherence.ts";
import { apiLog, errorMessage } from "./log.ts";
import { dropOldest } from "./bounded-map.ts";

/** Literal prefix of Ballast API keys (spec 5.1 with `bl_live`): `bl_live_<16 hex>_<32 base64url>`. */
export const API_KEY_PATTERN = /^bl_live_([0-9a-f]{16})_([A-Za-z0-9_-]{32})$/;

/** Tiers a stored key can carry (reference 4.2): operator-issued, supporter, retired self-serve. */
export const KEY_TIERS = ["standard", "donor", "self-serve"] as const;
export type KeyTier = (typeof KEY_TIERS)[number];
/** Tiers `KeyStore.create` and `update` accept; self-serve issuance is retired (spec 5.3). */
export const ISSUABLE_TIERS = ["standard", "donor"] as const;
export type IssuableTier = (typeof ISSUABLE_TIERS)[number];
/** Per-key limit bounds and default of `standard` keys, requests per 60 s (spec 8). */
export const RATE_LIMIT_MIN = 1;
export const RATE_LIMIT_MAX = 10_000;
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 120;
/** Fixed limit of `donor` keys, requests per minute; donor keys never expire (spec 5.3, 8). */
export const DONOR_RATE_LIMIT_PER_MINUTE = 10;
/** Fixed limit of legacy `self-serve` keys, requests per minute (spec 8). */
export const SELF_SERVE_RATE_LIMIT_PER_MINUTE = 30;
/** Lifetime of legacy `self-serve` keys: 60 days, in seconds (spec 8). */
export const SELF_SERVE_TTL_SEC = 60 * 86_400;
/** Default deadline (ms) of one key lookup, of connecting and of one statement on Postgres. */
export const DEFAULT_STATE_TIMEOUT_MS = 300;
/** Default `application_name` of the API's Postgres connections (visible in pg_stat_activity). */
export const DEFAULT_APPLICATION_NAME = "ballast-api";
/** During a store outage, a standard key confirmed within this window (ms) still serves cacheable GETs (spec 5.5). */
export const KEY_OUTAGE_GRACE_MS = 5 * 60_000;
/** Bounded number of verified keys kept per instance (oldest out first). */
export const KEY_CACHE_MAX = 4096;

/**
 * The state store did not answer in time or could not be reached (connection refused, terminated,
 * timed out, statement cancelled, circuit open), or a lookup that must succeed failed (the self-serve
 * revocation list). Callers answer 503 `Public API temporarily unavailable`. `message` may hold the
 * driver's text (logs, CLI); `reason` is the generic word safe to show publicly; `cause` the driver error.
 */
export class StateStoreUnavailableError extends Error {
  override readonly name = "StateStoreUnavailableError";
  readonly reason: DependencyReason;
  constructor(message: string, options?: { cause?: unknown; reason?: DependencyReason }) {
    super(message, options);
    this.reason = options?.reason ?? dependencyReason(options?.cause ?? this);
  }
}

/** Fields `KeyInputError` can name: the inputs of `create` and `update`, or `patch` for an empty update. */
export type KeyInputField = "name" | "tier" | "rateLimitPerMinute" | "ownerEmail" | "expiresAt" | "isActive" | "patch";

/** Invalid input to `create` or `update`; `field` names the input. */
export class KeyInputError extends Error {
  override readonly name = "KeyInputError";
  constructor(
    readonly field: KeyInputField,
    message: string,
  ) {
    super(message);
  }
}

/** Minimal query surface shared by PGlite and node-postgres. */
export interface SqlClient {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
  close(): Promise<void>;
  /** Which engine (`openSqlClient` sets it); test doubles may leave it out. */
  readonly kind?: "postgres" | "pglite";
  /** Runs a script of several statements without parameters, as one implicit transaction where the engine allows. */
  exec?(sql: string): Promise<void>;
  /** Postgres only: a dedicated session with `LISTEN channel` active (see api/lib/key-coherence.ts). */
  listen?: Listen;
}

/** A stored key: never the secret, only its keyed hash. `rateLimitPerMinute` requests per 60 s (fixed by tier for donor and self-serve). */
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

/** A key as listed for operators: the record plus owner, creation and change times (Unix s) and a masked token `bl_live_<prefix>_…`. */
export interface ApiKeyListing extends ApiKeyRecord {
  ownerEmail: string | null;
  createdAt: number;
  /** Unix seconds of the latest change (update, deactivate, rotate), null when never changed. */
  updatedAt: number | null;
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

/** Patch of `update` (spec 4.5): any of these; `rateLimitPerMinute` may be a decimal string (CLI flags). */
export interface KeyPatch {
  name?: string;
  ownerEmail?: string | null;
  tier?: string;
  rateLimitPerMinute?: number | string;
  isActive?: boolean;
}

/** Health of the state store as seen by this process (health's `stateStore`). Times in Unix seconds. */
export interface KeyStoreStatus {
  /** `ok` until an availability failure; `unavailable` until a call succeeds again. */
  state: "ok" | "unavailable";
  /** The breaker in front of the store: `open` = calls fail fast (503) until a half-open probe succeeds. */
  circuit: CircuitState;
  /** Which store: `postgres` (DATABASE_URL) or the embedded `pglite`; null for a test double. */
  backend: "postgres" | "pglite" | null;
  /** Generic reason of the latest failure (`timeout`, `connection refused`, …; never driver text), null once a call succeeded after it. */
  reason: DependencyReason | null;
  /** Latest successful call, null before the first. */
  lastOkAt: number | null;
  /** Latest availability failure, null before the first. */
  lastFailureAt: number | null;
}

/** The current HMAC pepper and, during a pepper rotation, the previous one. */
export interface Peppers {
  current: string;
  previous?: string;
}

/**
 * How an instance may reuse verifications without asking the store (outside an outage):
 * - `none` (default): never; every request is verified by the store (the cache serves only the
 *   spec 5.5 outage fallback).
 * - `exclusive`: this process is the only writer (the embedded PGlite, owned by the server; the key
 *   CLI goes through the server): a change evicts the key synchronously, so the cache is exact.
 * - `shared`: Postgres shared by instances: the LISTEN/NOTIFY lease protocol of
 *   api/lib/key-coherence.ts; while this instance's lease is unconfirmed every request is verified.
 */
export type KeyCacheMode = "none" | "exclusive" | "shared";

/** Settings of `KeyStore`. Times in ms. */
export interface KeyStoreOptions {
  /** Overall deadline of one `verify` / `check`, schema creation included; default 300. */
  verifyDeadlineMs?: number;
  /** Deadline of `init` and the management calls (`create`, `list`, `update`, `rotate`, `deactivate`); default 5000. */
  adminDeadlineMs?: number;
  cacheMode?: KeyCacheMode;
  /** Breaker in front of the store (default: 5 s cool-down, opens on one timeout or 3 other failures in a row). */
  breaker?: CircuitBreakerOptions;
  /** Lease of the `shared` cache mode; default 3000. */
  leaseMs?: number;
}

/** Outcome of `authenticate`. `seen`: the key was verified on this instance before this request. */
export type KeyAuthResult =
  | { kind: "valid"; record: ApiKeyRecord; seen: boolean; source: "cache" | "store" | "outage-cache" }
  | { kind: "invalid" }
  | { kind: "unavailable" };

const SCHEMA = [
  `create table if not exists api_keys (
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
  )`,
  "alter table api_keys add column if not exists updated_at bigint",
  "alter table api_keys add column if not exists pepper_version integer not null default 1",
  "create table if not exists api_key_self_serve_revocations (key_prefix text primary key, revoked_at bigint not null)",
  "create table if not exists api_key_changes (id integer primary key, generation bigint not null)",
  "insert into api_key_changes (id, generation) values (1, 0) on conflict (id) do nothing",
  "create table if not exists api_key_instances (instance_id text primary key, seen_generation bigint not null, lease_until timestamptz not null)",
  // Donor key claims (spec 5.3): one per wallet, written in the same statement as its key.
  `create table if not exists api_key_donor_claims (
    address text primary key check (address ~ '^0x[0-9a-f]{40}$'),
    key_prefix text not null unique,
    claimed_at bigint not null
  )`,
  // Claim messages already presented (sha-256 hex of the message), until they expire: each is used once.
  "create table if not exists api_key_donor_claim_messages (message_hash text primary key, expires_at bigint not null)",
];
/** Serializes schema creation of concurrent instances on Postgres (transaction-scoped advisory lock). */
const SCHEMA_LOCK = 7_340_119;

type KeyRow = {
  id: string;
  key_prefix: string;
  secret_hash: string;
  name: string;
  owner_email: string | null;
  tier: string;
  rate_limit_per_minute: number;
  is_active: boolean;
  expires_at: string | number | null;
  created_at: string | number;
  updated_at: string | number | null;
};
const COLUMNS =
  "id, key_prefix, secret_hash, name, owner_email, tier, rate_limit_per_minute, is_active, expires_at, created_at, updated_at";
/** Bumps the change generation and notifies instances, in the statement that changed key `k` (a CTE returning `id`). */
const NOTIFY_CHANGE = `g as (update api_key_changes set generation = generation + 1 where id = 1 and exists (select 1 from k) returning generation)
  select k.*, g.generation::text as generation, pg_notify('${KEY_CHANGES_CHANNEL}', g.generation::text || ' ' || k.id) as notified from k, g`;

const nowSec = () => Math.floor(Date.now() / 1000);
const num = (v: string | number | null) => (v === null ? null : Number(v));

/** The limit a tier enforces: fixed for donor and self-serve, the stored per-key value for standard. */
export function tierRateLimit(tier: string, stored: number): number {
  return tier === "donor"
    ? DONOR_RATE_LIMIT_PER_MINUTE
    : tier === "self-serve"
      ? SELF_SERVE_RATE_LIMIT_PER_MINUTE
      : stored;
}

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    keyPrefix: row.key_prefix,
    name: row.name,
    tier: row.tier,
    rateLimitPerMinute: tierRateLimit(row.tier, Number(row.rate_limit_per_minute)),
    isActive: row.is_active,
    expiresAt: num(row.expires_at),
  };
}

function toListing(row: KeyRow): ApiKeyListing {
  return {
    ...toRecord(row),
    ownerEmail: row.owner_email,
    createdAt: Number(row.created_at),
    updatedAt: num(row.updated_at),
    maskedToken: maskToken(row.key_prefix),
  };
}

/** Masked display form of a key: `bl_live_<prefix>_…` (the secret is never stored). */
export function maskToken(keyPrefix: string): string {
  return `bl_live_${keyPrefix}_…`;
}

function validName(raw: string | undefined): string {
  const name = (raw ?? "").trim();
  if (!name || name.length > 80)
    throw new KeyInputError("name", `Invalid name ${JSON.stringify(raw ?? "")}: expected 1 to 80 characters`);
  return name;
}

function validTier(raw: string): IssuableTier {
  if (!(ISSUABLE_TIERS as readonly string[]).includes(raw)) {
    throw new KeyInputError(
      "tier",
      `Invalid tier ${JSON.stringify(raw)}: expected one of ${ISSUABLE_TIERS.join(", ")} (self-serve issuance is retired)`,
    );
  }
  return raw as IssuableTier;
}

function validLimit(raw: number | string, maxRateLimitPerMinute: number): number {
  const limit = typeof raw === "string" ? (/^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN) : raw;
  const max = Math.min(maxRateLimitPerMinute, 2_147_483_647);
  if (!Number.isInteger(limit) || limit < RATE_LIMIT_MIN || limit > max) {
    throw new KeyInputError(
      "rateLimitPerMinute",
      `Invalid rate limit ${JSON.stringify(raw)}: expected an integer from ${RATE_LIMIT_MIN} to ${max} requests per minute`,
    );
  }
  return limit;
}

function validEmail(raw: string | null | undefined): string | null {
  const email = raw?.trim().toLowerCase() || null;
  if (email !== null && (email.length > 200 || !/^[^\s@]+@[^\s@]+$/.test(email))) {
    throw new KeyInputError(
      "ownerEmail",
      `Invalid owner email ${JSON.stringify(raw)}: expected an address of at most 200 characters`,
    );
  }
  return email;
}

/** A donor key's limit is fixed: an explicit other value is an error rather than silently ignored. */
function donorLimit(raw: number | string | undefined): number {
  if (raw !== undefined && Number(raw) !== DONOR_RATE_LIMIT_PER_MINUTE) {
    throw new KeyInputError(
      "rateLimitPerMinute",
      `Invalid rate limit ${JSON.stringify(raw)}: donor keys are fixed at ${DONOR_RATE_LIMIT_PER_MINUTE} requests per minute`,
    );
  }
  return DONOR_RATE_LIMIT_PER_MINUTE;
}

/**
 * Validates and normalizes a new key (reference 4.1): name 1–80 chars after trimming; tier one of
 * `ISSUABLE_TIERS` (default `standard`); rate limit an integer 1–10000 requests per minute (default
 * 120; `donor` keys are fixed at 10 and never expire); owner email ≤ 200 chars, lower-cased; expiry a
 * positive integer Unix second or null. `maxRateLimitPerMinute` raises the upper bound (development
 * keys of benchmarks; ≤ 2^31 − 1).
 * @throws KeyInputError naming the first invalid field.
 */
export function validateKeyInput(input: NewKeyInput, maxRateLimitPerMinute = RATE_LIMIT_MAX): ValidKeyInput {
  const name = validName(input.name);
  const tier = validTier(input.tier ?? "standard");
  const limit =
    tier === "donor"
      ? donorLimit(input.rateLimitPerMinute)
      : validLimit(input.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE, maxRateLimitPerMinute);
  const email = validEmail(input.ownerEmail);
  const expiresAt = input.expiresAt ?? null;
  if (expiresAt !== null && (!Number.isSafeInteger(expiresAt) || expiresAt <= 0)) {
    throw new KeyInputError(
      "expiresAt",
      `Invalid expiry ${JSON.stringify(expiresAt)}: expected a positive integer Unix second or none`,
    );
  }
  if (expiresAt !== null && tier === "donor")
    throw new KeyInputError("expiresAt", "Invalid expiry: donor keys never expire");
  return { name, tier, rateLimitPerMinute: limit, ownerEmail: email, expiresAt };
}

/** A dropped or reset connection (worth one retry of an idempotent read on a fresh connection). */
function isConnectionLoss(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return (
    e?.code === "57P01" ||
    e?.code === "ECONNRESET" ||
    e?.code === "EPIPE" ||
    /Connection terminated|terminating connection/i.test(e?.message ?? "")
  );
}

/** Availability failures (count for the breaker and health); `query failed` means the store answered. */
const isAvailabilityFailure = (r: DependencyReason) => r !== "query failed";

interface CacheEntry {
  record: ApiKeyRecord;
  /** Coherence epoch the verification was made under (shared mode). */
  epoch: number;
  /** Last time (app clock, ms) the store confirmed the key: a verification, or a coherent cache hit. */
  confirmedAt: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * API keys in the state store (PGlite by default, Postgres via DATABASE_URL). Only the prefix and
 * HMAC-SHA256(pepper, secret) are stored; the plaintext token is returned once by `create`/`rotate`.
 *
 * Every call runs under a deadline behind a circuit breaker and throws `StateStoreUnavailableError`
 * when the store does not answer in time, cannot be reached, or the breaker is open (fail fast for
 * its cool-down, then one half-open probe); the schema is created by the first call that reaches
 * the store (so `init` never throws for an unreachable database, and the store heals on the next
 * use). `status()` reports the outcome of the latest call and the breaker.
 *
 * Tiers: `standard` (per-key limit 1-10000, default 120), `donor` (10/min, no expiry, always verified
 * by the store), legacy `self-serve` (30/min, 60-day expiry, checked on every request against the
 * durable revocation list keyed by prefix; fails closed when that list cannot be read).
 *
 * Pepper rotation: verification tries the current pepper, then the previous one; a match with the
 * previous pepper re-hashes the row with the current one (`pepper_version` + 1).
 *
 * `authenticate` adds the per-instance cache of verified standard keys (spec 5.5); changes
 * (`deactivate`, `rotate`, `update`) reach every instance's cache before they return (see
 * `KeyCacheMode` and api/lib/key-coherence.ts).
 */
export class KeyStore {
  private readonly verifyDeadlineMs: number;
  private readonly adminDeadlineMs: number;
  private readonly peppers: Peppers;
  private readonly breaker: CircuitBreaker;
  private readonly cacheMode: KeyCacheMode;
  private readonly coherence: KeyCoherence | null;
  private readonly leaseMs: number;
  private schemaReady: Promise<void> | null = null;
  private current: Omit<KeyStoreStatus, "circuit" | "backend"> = {
    state: "ok",
    reason: null,
    lastOkAt: null,
    lastFailureAt: null,
  };
  /** Verified standard keys by token, oldest first; `byId` maps key id → token for eviction. */
  private readonly cache = new Map<string, CacheEntry>();
  private readonly byId = new Map<string, string>();
  /** Bumped by every eviction: a verification that raced an eviction is not cached. */
  private evictions = 0;
  private readonly loggedQueryFailures = new Set<string>();
  /** Counters for tests and diagnostics: cache hits and store lookups of `authenticate`. */
  readonly counters = { cacheHits: 0, storeLookups: 0, outageHits: 0 };

  /**
   * @param sql the store (see `openSqlClient`).
   * @param pepper the HMAC pepper, or `{ current, previous }` during a pepper rotation.
   */
  constructor(
    private readonly sql: SqlClient,
    pepper: string | Peppers,
    opts: KeyStoreOptions = {},
  ) {
    this.peppers = typeof pepper === "string" ? { current: pepper } : pepper;
    this.verifyDeadlineMs = opts.verifyDeadlineMs ?? DEFAULT_STATE_TIMEOUT_MS;
    this.adminDeadlineMs = opts.adminDeadlineMs ?? 5000;
    this.breaker = new CircuitBreaker(opts.breaker);
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    const listen = sql.listen;
    this.cacheMode = opts.cacheMode === "shared" && !listen ? "none" : (opts.cacheMode ?? "none");
    this.coherence =
      this.cacheMode === "shared" && listen
        ? new KeyCoherence({
            listen,
            ensureSchema: () => this.ensureSchema(),
            evict: (id) => this.evict(id),
            leaseMs: this.leaseMs,
          })
        : null;
  }

  /**
   * Creates the schema when the store is reachable and, in `shared` cache mode, starts listening for
   * key changes. Never throws: a failure is recorded in `status()` and retried by later calls.
   */
  async init(): Promise<KeyStoreStatus> {
    await this.run("init", this.adminDeadlineMs, false, async () => undefined, true).catch(() => undefined);
    if (this.coherence) await this.coherence.start();
    return this.status();
  }

  /** Outcome of the latest call and the breaker state (copy). Times in Unix seconds. */
  status(): KeyStoreStatus {
    return { ...this.current, circuit: this.breaker.state, backend: this.sql.kind ?? null };
  }

  /**
   * Probes the store (a read of `api_keys`, schema creation when pending) under the verify deadline;
   * never throws. It is a half-open probe even inside the breaker's cool-down (unless one is in flight).
   */
  async check(): Promise<KeyStoreStatus> {
    await this.run(
      "check",
      this.verifyDeadlineMs,
      true,
      async () => {
        await this.sql.query("select 1 from api_keys limit 1");
      },
      true,
    ).catch(() => undefined);
    return this.status();
  }

  /**
   * The state store's SQL client, shared with the other tables of the state store (status history):
   * one pool per process, and the embedded PGlite can be opened only once. Closed by `close()`.
   */
  get sqlClient(): SqlClient {
    return this.sql;
  }

  /** Instances holding a live cache lease on this store (this one included; 1 outside `shared` mode). */
  get liveInstances(): number {
    return this.coherence?.liveInstances ?? 1;
  }

  /** Stops listening for key changes and closes the underlying SQL client (pool or PGlite). */
  async close(): Promise<void> {
    await this.coherence?.stop();
    await this.sql.close();
  }

  private hash(secret: string, pepper = this.peppers.current): string {
    return createHmac("sha256", pepper).update(secret).digest("hex");
  }

  private ensureSchema(): Promise<void> {
    this.schemaReady ??= (async () => {
      if (this.sql.kind === "postgres" && this.sql.exec) {
        await this.sql.exec(`select pg_advisory_xact_lock(${SCHEMA_LOCK}); ${SCHEMA.join(";\n")}`);
      } else {
        for (const stmt of SCHEMA) await this.sql.query(stmt);
      }
    })().catch((err: unknown) => {
      this.schemaReady = null;
      throw err;
    });
    return this.schemaReady;
  }

  private markOk(): void {
    if (this.current.state === "unavailable") apiLog("info", "state-store", "state store available again");
    this.current = { ...this.current, state: "ok", reason: null, lastOkAt: nowSec() };
  }

  private markFailed(err: StateStoreUnavailableError): void {
    if (this.current.state === "ok")
      apiLog("warn", "state-store", "state store unavailable; keyed requests answer 503 until it is back", {
        error: err.message,
        reason: err.reason,
      });
    this.current = { ...this.current, state: "unavailable", reason: err.reason, lastFailureAt: nowSec() };
  }

  /**
   * Runs `op` after the schema is ready, behind the breaker, racing a `deadlineMs` timer. Idempotent
   * reads (`retry`) are retried once on a dropped connection while the deadline lasts. `probe`: may
   * pass an open breaker as its half-open probe (health checks and operator calls, which are rare
   * and explicit).
   * @throws StateStoreUnavailableError on timeout, any store failure, or an open breaker.
   */
  private async run<T>(
    what: string,
    deadlineMs: number,
    retry: boolean,
    op: () => Promise<T>,
    probe = false,
  ): Promise<T> {
    if (!this.breaker.tryAcquire(probe)) {
      throw new StateStoreUnavailableError(
        `state store: ${what} refused: circuit open (${this.current.reason ?? "unavailable"}), retry in ${Math.ceil(this.breaker.retryInMs())} ms`,
        { reason: "circuit open" },
      );
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new StateStoreUnavailableError(`state store: ${what} got no answer within ${deadlineMs} ms`, {
              reason: "timeout",
            }),
          ),
        deadlineMs,
      );
    });
    const attempt = async () => {
      await this.ensureSchema();
      return op();
    };
    const work = attempt().catch((err: unknown) => (retry && isConnectionLoss(err) ? attempt() : Promise.reject(err)));
    work.catch(() => undefined); // a late failure after the deadline is not unhandled
    try {
      const out = await Promise.race([work, deadline]);
      this.breaker.success();
      this.markOk();
      return out;
    } catch (err) {
      const e =
        err instanceof StateStoreUnavailableError
          ? err
          : new StateStoreUnavailableError(`state store: ${what} failed: ${errorMessage(err)}`, { cause: err });
      if (isAvailabilityFailure(e.reason)) {
        this.breaker.failure(e.reason === "timeout" ? "timeout" : "other");
        this.markFailed(e);
      } else {
        // The store answered (e.g. a missing table): not an outage for the breaker, but logged.
        this.breaker.success();
        if (!this.loggedQueryFailures.has(e.message) && this.loggedQueryFailures.size < 100) {
          this.loggedQueryFailures.add(e.message);
          apiLog("warn", "state-store", "state store query failed", { error: e.message });
        }
      }
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  // ---- per-instance verification cache --------------------------------------------------------

  private evict(id: string): void {
    this.evictions++;
    const token = this.byId.get(id);
    if (token === undefined) return;
    this.byId.delete(id);
    this.cache.delete(token);
  }

  private remember(token: string, record: ApiKeyRecord, epoch: number, nowMs: number): void {
    const old = this.byId.get(record.id);
    if (old !== undefined && old !== token) this.cache.delete(old);
    this.cache.delete(token);
    if (this.cache.size >= KEY_CACHE_MAX) {
      const dropped = dropOldest(this.cache);
      if (dropped) this.byId.delete(dropped[1].record.id);
    }
    this.cache.set(token, { record, epoch, confirmedAt: nowMs });
    this.byId.set(record.id, token);
  }

  /** Whether a cached verification may be served without asking the store (cache mode and lease). */
  private coherent(e: CacheEntry): boolean {
    if (this.cacheMode === "exclusive") return true;
    return this.coherence !== null && e.epoch === this.coherence.epoch && this.coherence.trusted();
  }

  /**
   * The record of `token` when `authenticate` would answer it from memory (`source: "cache"`): a
   * standard key whose cached verification is coherent and not expired at `nowMs` (app clock, ms);
   * counted and confirmed as that answer is. Undefined otherwise (ask `authenticate`). Synchronous,
   * for the Node fast path.
   */
  cachedRecord(token: string, nowMs: number): ApiKeyRecord | undefined {
    const e = this.cache.get(token);
    if (!e || !this.coherent(e) || (e.record.expiresAt !== null && e.record.expiresAt <= Math.floor(nowMs / 1000)))
      return undefined;
    e.confirmedAt = nowMs;
    this.counters.cacheHits++;
    return e.record;
  }

  /**
   * Authenticates a presented token for a request at `nowMs` (app clock, ms) — the lane check's
   * entry point (spec 5.1, 5.3, 5.5):
   * - a malformed token is `invalid` without a store lookup;
   * - a standard key whose earlier verification is still coherent (see `KeyCacheMode`) is served
   *   from memory (`source: "cache"`);
   * - otherwise the store verifies it (`verify`: donor and self-serve keys always; self-serve with
   *   the revocation list);
   * - when the store is unavailable, a standard key confirmed within `KEY_OUTAGE_GRACE_MS` still
   *   passes for a cacheable GET (`outage-cache`); everything else (donor, self-serve, unknown,
   *   stale or never verified here) is `unavailable` (the caller answers 503).
   * Never throws.
   */
  async authenticate(token: string, nowMs: number, cacheableGet: boolean): Promise<KeyAuthResult> {
    const nowS = Math.floor(nowMs / 1000);
    const e = this.cache.get(token);
    if (e && this.coherent(e)) {
      if (e.record.expiresAt !== null && e.record.expiresAt <= nowS) {
        this.evict(e.record.id);
        return { kind: "invalid" };
      }
      e.confirmedAt = nowMs;
      this.counters.cacheHits++;
      return { kind: "valid", record: e.record, seen: true, source: "cache" };
    }
    if (!API_KEY_PATTERN.test(token)) return { kind: "invalid" };
    const epoch = this.coherence?.epoch ?? 0;
    const evictions = this.evictions;
    let record: ApiKeyRecord | null;
    try {
      this.counters.storeLookups++;
      record = await this.verify(token, nowS);
    } catch (err) {
      if (!(err instanceof StateStoreUnavailableError)) throw err;
      if (
        e &&
        cacheableGet &&
        e.record.tier === "standard" &&
        nowMs - e.confirmedAt <= KEY_OUTAGE_GRACE_MS &&
        (e.record.expiresAt === null || e.record.expiresAt > nowS)
      ) {
        this.counters.outageHits++;
        return { kind: "valid", record: e.record, seen: true, source: "outage-cache" };
      }
      return { kind: "unavailable" };
    }
    if (!record) {
      if (e) this.evict(e.record.id);
      return { kind: "invalid" };
    }
    // Only standard keys are kept (donor and self-serve are always verified by the store), and not
    // when a change was heard while this verification ran (its answer may predate the change).
    if (record.tier === "standard" && this.evictions === evictions) this.remember(token, record, epoch, nowMs);
    else if (e) this.evict(e.record.id);
    return { kind: "valid", record, seen: e !== undefined, source: "store" };
  }

  // ---- store operations ----------------------------------------------------------------------

  /**
   * Once a change committed: evicts the key here and, on Postgres, waits until every instance with a
   * live cache lease has acknowledged `generation` (at most the lease plus 1 s; if the wait itself
   * fails, for one whole lease, after which no silent instance still trusts its cache).
   */
  private async propagate(id: string, generation: number): Promise<void> {
    this.evict(id);
    if (this.sql.kind !== "postgres") return;
    const me = this.coherence?.instanceId ?? "";
    const deadline = performance.now() + this.leaseMs + 1000;
    const started = performance.now();
    try {
      for (;;) {
        const { rows } = await this.sql.query<{ n: number }>(
          "select count(*)::int as n from api_key_instances where lease_until > now() and seen_generation < $1 and instance_id <> $2",
          [generation, me],
        );
        if (Number(rows[0].n) === 0) return;
        if (performance.now() > deadline) {
          apiLog("warn", "key-cache", "instances did not acknowledge a key change in time; their leases have run out", {
            generation,
            waitedMs: Math.round(performance.now() - started),
          });
          return;
        }
        await sleep(5);
      }
    } catch (err) {
      apiLog("warn", "key-cache", "could not confirm that instances heard a key change; waiting one lease", {
        error: errorMessage(err),
      });
      await sleep(Math.max(0, this.leaseMs - (performance.now() - started)));
    }
  }

  /**
   * Creates a key and returns its record plus the plaintext token (shown once).
   * `opts.maxRateLimitPerMinute` lifts the 10000 bound (development key only).
   * @throws KeyInputError on invalid input (see `validateKeyInput`); StateStoreUnavailableError.
   */
  async create(
    input: NewKeyInput,
    opts: { maxRateLimitPerMinute?: number } = {},
  ): Promise<{ record: ApiKeyRecord; token: string }> {
    const v = validateKeyInput(input, opts.maxRateLimitPerMinute);
    return this.insert(v.name, v.tier, v.rateLimitPerMinute, v.ownerEmail, v.expiresAt, "create");
  }

  /**
   * Stores a legacy `self-serve` key (issuance is retired: this exists to import keys issued before
   * and for tests): 30 requests per minute, expiring `SELF_SERVE_TTL_SEC` (60 days) after
   * `issuedAt` (Unix s, default now). Returns the record and plaintext token.
   * @throws KeyInputError (name, owner email); StateStoreUnavailableError.
   */
  async createLegacySelfServe(input: {
    name: string;
    ownerEmail?: string | null;
    issuedAt?: number;
  }): Promise<{ record: ApiKeyRecord; token: string }> {
    const issuedAt = input.issuedAt ?? nowSec();
    return this.insert(
      validName(input.name),
      "self-serve",
      SELF_SERVE_RATE_LIMIT_PER_MINUTE,
      validEmail(input.ownerEmail),
      issuedAt + SELF_SERVE_TTL_SEC,
      "create-self-serve",
    );
  }

  private async insert(
    name: string,
    tier: KeyTier,
    limit: number,
    email: string | null,
    expiresAt: number | null,
    what: string,
  ): Promise<{ record: ApiKeyRecord; token: string }> {
    const prefix = randomBytes(8).toString("hex");
    const secret = randomBytes(24).toString("base64url");
    const id = randomUUID();
    await this.run(
      what,
      this.adminDeadlineMs,
      false,
      () =>
        this.sql.query(
          "insert into api_keys (id, key_prefix, secret_hash, name, owner_email, tier, rate_limit_per_minute, expires_at, created_at) values ($1,$2,$3,$4,$5,$6,$7,$8,$9)",
          [id, prefix, this.hash(secret), name, email, tier, limit, expiresAt, nowSec()],
        ),
      true,
    );
    return {
      record: {
        id,
        keyPrefix: prefix,
        name,
        tier,
        rateLimitPerMinute: tierRateLimit(tier, limit),
        isActive: true,
        expiresAt,
      },
      token: `bl_live_${prefix}_${secret}`,
    };
  }

  /**
   * The donor claim of `address` (lower-case 0x hex) and the state of its key: null when the wallet
   * never claimed; `key` null when the claimed key row is gone (orphaned claim), else whether it is active.
   * @throws StateStoreUnavailableError.
   */
  async donorClaim(
    address: string,
  ): Promise<{ keyPrefix: string; claimedAt: number; key: { id: string; isActive: boolean } | null } | null> {
    const { rows } = await this.run(
      "donor-claim",
      this.adminDeadlineMs,
      true,
      () =>
        this.sql.query<{
          key_prefix: string;
          claimed_at: string | number;
          id: string | null;
          is_active: boolean | null;
        }>(
          "select c.key_prefix, c.claimed_at, k.id, k.is_active from api_key_donor_claims c left join api_keys k on k.key_prefix = c.key_prefix where c.address = $1",
          [address],
        ),
      true,
    );
    const r = rows[0];
    if (!r) return null;
    return {
      keyPrefix: r.key_prefix,
      claimedAt: Number(r.claimed_at),
      key: r.id === null ? null : { id: r.id, isActive: r.is_active === true },
    };
  }

  /**
   * Issues the donor key of `address` (lower-case 0x hex) with its claim, in one statement: both rows
   * or neither. Returns the key and plaintext token (shown once), or `conflict` when the wallet
   * already has a claim (a concurrent first claim won).
   * @throws StateStoreUnavailableError (any other failure).
   */
  async issueDonorKey(address: string): Promise<{ record: ApiKeyRecord; token: string } | "conflict"> {
    const prefix = randomBytes(8).toString("hex");
    const secret = randomBytes(24).toString("base64url");
    const id = randomUUID();
    const name = `donor ${address}`;
    const now = nowSec();
    try {
      await this.run(
        "issue-donor-key",
        this.adminDeadlineMs,
        false,
        () =>
          this.sql.query(
            `with k as (insert into api_keys (id, key_prefix, secret_hash, name, owner_email, tier, rate_limit_per_minute, expires_at, created_at)
           values ($1, $2, $3, $4, null, 'donor', $5, null, $6) returning key_prefix)
         insert into api_key_donor_claims (address, key_prefix, claimed_at) select $7, key_prefix, $6 from k`,
            [id, prefix, this.hash(secret), name, DONOR_RATE_LIMIT_PER_MINUTE, now, address],
          ),
        true,
      );
    } catch (err) {
      if (isUniqueViolation(err)) return "conflict";
      throw err;
    }
    return {
      record: {
        id,
        keyPrefix: prefix,
        name,
        tier: "donor",
        rateLimitPerMinute: DONOR_RATE_LIMIT_PER_MINUTE,
        isActive: true,
        expiresAt: null,
      },
      token: `bl_live_${prefix}_${secret}`,
    };
  }

  /**
   * Records the first presentation of a donor claim message (`messageHash`: sha-256 hex of its bytes)
   * until `expiresAt` (Unix s), pruning records expired at `nowSec`. Returns true the first time, false
   * when the message was presented before (a replay, whatever that first attempt's outcome).
   * @throws StateStoreUnavailableError.
   */
  async recordClaimMessage(messageHash: string, expiresAt: number, nowSec: number): Promise<boolean> {
    const { rows } = await this.run("record-claim-message", this.adminDeadlineMs, false, async () => {
      await this.sql.query("delete from api_key_donor_claim_messages where expires_at < $1", [nowSec]);
      return this.sql.query(
        "insert into api_key_donor_claim_messages (message_hash, expires_at) values ($1, $2) on conflict (message_hash) do nothing returning message_hash",
        [messageHash, expiresAt],
      );
    });
    return rows.length === 1;
  }

  /** Whether a pepper is configured to hash new keys with (at least 16 characters). */
  get hasPepper(): boolean {
    return this.peppers.current.length >= 16;
  }

  /**
   * Verifies a token against the store (`nowSec` Unix seconds), never from a cache: shape, prefix
   * lookup, constant-time hash comparison with the current pepper then the previous one (a match
   * with the previous pepper re-hashes the row with the current one), active, not expired, and for
   * `self-serve` keys not on the revocation list. Returns the record or null (unknown, wrong secret,
   * inactive, expired, revoked).
   * @throws StateStoreUnavailableError when the store does not answer within the verify deadline
   * (default 300 ms), cannot be reached, the breaker is open, or the revocation list of a self-serve
   * key cannot be read (fail closed); callers answer 503.
   */
  async verify(token: string, nowSec: number): Promise<ApiKeyRecord | null> {
    const m = API_KEY_PATTERN.exec(token);
    if (!m) return null;
    const { rows } = await this.run("verify", this.verifyDeadlineMs, true, () =>
      this.sql.query<KeyRow>(`select ${COLUMNS} from api_keys where key_prefix = $1`, [m[1]]),
    );
    const row = rows[0];
    if (!row) return null;
    const stored = Buffer.from(row.secret_hash, "hex");
    const same = (hex: string) => {
      const b = Buffer.from(hex, "hex");
      return stored.length === b.length && timingSafeEqual(stored, b);
    };
    if (!same(this.hash(m[2]))) {
      const previous = this.peppers.previous;
      if (!previous || !same(this.hash(m[2], previous))) return null;
      await this.rehash(row, m[2]);
    }
    const record = toRecord(row);
    if (!record.isActive || (record.expiresAt !== null && record.expiresAt <= nowSec)) return null;
    if (record.tier === "self-serve") {
      const revoked = await this.run("revocation-list", this.verifyDeadlineMs, true, () =>
        this.sql.query<{ revoked: boolean }>(
          "select exists (select 1 from api_key_self_serve_revocations where key_prefix = $1) as revoked",
          [row.key_prefix],
        ),
      );
      if (revoked.rows[0]?.revoked) return null;
    }
    return record;
  }

  /** Re-hashes a row verified with the previous pepper; failures are logged, never fail the verification. */
  private async rehash(row: KeyRow, secret: string): Promise<void> {
    try {
      await this.run("rehash", this.verifyDeadlineMs, false, () =>
        this.sql.query(
          "update api_keys set secret_hash = $2, pepper_version = pepper_version + 1 where id = $1 and secret_hash = $3",
          [row.id, this.hash(secret), row.secret_hash],
        ),
      );
    } catch (err) {
      apiLog("warn", "state-store", "re-hashing a key with the current pepper failed; it is retried on its next use", {
        keyId: row.id,
        reason: (err as StateStoreUnavailableError).reason,
      });
    }
  }

  /** Every key, oldest first, without secrets or hashes. @throws StateStoreUnavailableError. */
  async list(): Promise<ApiKeyListing[]> {
    const { rows } = await this.run(
      "list",
      this.adminDeadlineMs,
      true,
      () => this.sql.query<KeyRow>(`select ${COLUMNS} from api_keys order by created_at, id`),
      true,
    );
    return rows.map(toListing);
  }

  /** One key by id, without secret or hash; null when unknown. @throws StateStoreUnavailableError. */
  async get(id: string): Promise<ApiKeyListing | null> {
    const { rows } = await this.run(
      "get",
      this.adminDeadlineMs,
      true,
      () => this.sql.query<KeyRow>(`select ${COLUMNS} from api_keys where id = $1`, [id]),
      true,
    );
    return rows[0] ? toListing(rows[0]) : null;
  }

  /**
   * Sets isActive false (a `self-serve` key is also put on the revocation list). Returns false when
   * no key has that id. When it returns, the key answers 401 on every instance (see `KeyCacheMode`).
   * @throws StateStoreUnavailableError.
   */
  async deactivate(id: string): Promise<boolean> {
    const res = await this.run(
      "deactivate",
      this.adminDeadlineMs,
      false,
      () =>
        this.sql.query<{ id: string; generation: string }>(
          `with k as (update api_keys set is_active = false, updated_at = $2 where id = $1 returning id, key_prefix, tier),
      r as (insert into api_key_self_serve_revocations (key_prefix, revoked_at) select key_prefix, $2 from k where tier = 'self-serve' on conflict (key_prefix) do nothing),
      ${NOTIFY_CHANGE}`,
          [id, nowSec()],
        ),
      true,
    );
    if (!res.rows[0]) return false;
    await this.propagate(id, Number(res.rows[0].generation));
    return true;
  }

  /**
   * Puts a legacy self-serve key prefix (16 hex) on the durable revocation list; every later
   * verification of that key fails (spec 5.3). Returns false when it was already listed.
   * @throws KeyInputError on a malformed prefix; StateStoreUnavailableError.
   */
  async revokeSelfServe(keyPrefix: string): Promise<boolean> {
    if (!/^[0-9a-f]{16}$/.test(keyPrefix))
      throw new KeyInputError("patch", `Invalid key prefix ${JSON.stringify(keyPrefix)}: expected 16 hex characters`);
    const res = await this.run(
      "revoke",
      this.adminDeadlineMs,
      false,
      () =>
        this.sql.query(
          "insert into api_key_self_serve_revocations (key_prefix, revoked_at) values ($1, $2) on conflict (key_prefix) do nothing returning key_prefix",
          [keyPrefix, nowSec()],
        ),
      true,
    );
    return res.rows.length > 0;
  }

  /**
   * Replaces the prefix and secret of an active key (same id, name, tier and limit) and returns the
   * new plaintext token (shown once); a donor key's claim follows its new prefix in the same
   * statement. When it returns, the old token answers 401 on every instance.
   * Null when no active key has that id. @throws StateStoreUnavailableError.
   */
  async rotate(id: string): Promise<{ record: ApiKeyRecord; token: string } | null> {
    const prefix = randomBytes(8).toString("hex");
    const secret = randomBytes(24).toString("base64url");
    const { rows } = await this.run(
      "rotate",
      this.adminDeadlineMs,
      false,
      () =>
        this.sql.query<KeyRow & { generation: string }>(
          `with old as (select key_prefix from api_keys where id = $1),
        k as (update api_keys set key_prefix = $2, secret_hash = $3, updated_at = $4 where id = $1 and is_active returning ${COLUMNS}),
        c as (update api_key_donor_claims set key_prefix = $2 where key_prefix = (select key_prefix from old) and exists (select 1 from k) returning address),
        ${NOTIFY_CHANGE}`,
          [id, prefix, this.hash(secret), nowSec()],
        ),
      true,
    );
    if (!rows[0]) return null;
    await this.propagate(id, Number(rows[0].generation));
    return { record: toRecord(rows[0]), token: `bl_live_${prefix}_${secret}` };
  }

  /**
   * Changes any of name, ownerEmail, tier, rateLimitPerMinute, isActive (spec 4.5) and returns the
   * key as listed, or null when no key has that id. Rules: tier `standard` or `donor` (self-serve
   * issuance is retired, and a self-serve key's tier cannot change); a donor key's limit is fixed at
   * 10 and it never expires (becoming donor clears the expiry); limits 1-10000 (`maxRateLimitPerMinute`
   * lifts the bound, development key only); an empty owner email clears it. When it returns, every
   * instance applies the change.
   * @throws KeyInputError naming the first invalid field (`patch` when nothing is given); StateStoreUnavailableError.
   */
  async update(
    id: string,
    patch: KeyPatch,
    opts: { maxRateLimitPerMinute?: number } = {},
  ): Promise<ApiKeyListing | null> {
    const known = ["name", "ownerEmail", "tier", "rateLimitPerMinute", "isActive"];
    const given = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
    const unknown = given.find((k) => !known.includes(k));
    if (unknown)
      throw new KeyInputError("patch", `Invalid field ${JSON.stringify(unknown)}: expected any of ${known.join(", ")}`);
    if (!given.length) throw new KeyInputError("patch", `Empty update: expected any of ${known.join(", ")}`);
    const name = patch.name !== undefined ? validName(patch.name) : undefined;
    const email = patch.ownerEmail !== undefined ? validEmail(patch.ownerEmail) : undefined;
    const tier = patch.tier !== undefined ? validTier(patch.tier) : undefined;
    if (patch.isActive !== undefined && typeof patch.isActive !== "boolean")
      throw new KeyInputError("isActive", `Invalid isActive ${JSON.stringify(patch.isActive)}: expected true or false`);
    const existing = await this.get(id);
    if (!existing) return null;
    if (existing.tier === "self-serve" && tier !== undefined && tier !== (existing.tier as string)) {
      throw new KeyInputError(
        "tier",
        "Invalid tier change: legacy self-serve keys keep their tier until they expire; issue a standard key instead",
      );
    }
    const newTier = tier ?? existing.tier;
    let limit: number | undefined;
    if (newTier === "donor") limit = donorLimit(patch.rateLimitPerMinute);
    else if (newTier === "self-serve") {
      if (
        patch.rateLimitPerMinute !== undefined &&
        Number(patch.rateLimitPerMinute) !== SELF_SERVE_RATE_LIMIT_PER_MINUTE
      ) {
        throw new KeyInputError(
          "rateLimitPerMinute",
          `Invalid rate limit ${JSON.stringify(patch.rateLimitPerMinute)}: self-serve keys are fixed at ${SELF_SERVE_RATE_LIMIT_PER_MINUTE} requests per minute`,
        );
      }
    } else if (patch.rateLimitPerMinute !== undefined)
      limit = validLimit(patch.rateLimitPerMinute, opts.maxRateLimitPerMinute ?? RATE_LIMIT_MAX);
    else if (tier === "standard" && existing.tier === "donor") limit = DEFAULT_RATE_LIMIT_PER_MINUTE;

    const sets: string[] = [];
    const params: unknown[] = [id, nowSec()];
    const set = (col: string, v: unknown) => {
      params.push(v);
      sets.push(`${col} = $${params.length}`);
    };
    if (name !== undefined) set("name", name);
    if (email !== undefined) set("owner_email", email);
    if (tier !== undefined) set("tier", tier);
    if (limit !== undefined) set("rate_limit_per_minute", limit);
    if (patch.isActive !== undefined) set("is_active", patch.isActive);
    if (newTier === "donor") sets.push("expires_at = null");
    const { rows } = await this.run(
      "update",
      this.adminDeadlineMs,
      false,
      () =>
        this.sql.query<KeyRow & { generation: string }>(
          `with k as (update api_keys set ${[...sets, "updated_at = $2"].join(", ")} where id = $1 returning ${COLUMNS}), ${NOTIFY_CHANGE}`,
          params,
        ),
      true,
    );
    if (!rows[0]) return null;
    await this.propagate(id, Number(rows[0].generation));
    return toListing(rows[0]);
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
/** Whether a store error (or its cause) is a unique-key violation (SQLSTATE 23505). */
function isUniqueViolation(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 4; e = e.cause as typeof e, i++)
    if (e.code === "23505") return true;
  return false;
}

export async function openSqlClient(opts: SqlClientOptions): Promise<SqlClient> {
  if (opts.databaseUrl) {
    const { default: pg } = await import("pg");
    const timeout = opts.queryTimeoutMs ?? DEFAULT_STATE_TIMEOUT_MS;
    const applicationName = opts.applicationName ?? DEFAULT_APPLICATION_NAME;
    const connectTimeout = opts.connectTimeoutMs ?? DEFAULT_STATE_TIMEOUT_MS;
    let pool: InstanceType<typeof pg.Pool> | undefined;
    const getPool = () => {
      if (pool) return pool;
      const p = new pg.Pool({
        connectionString: opts.databaseUrl,
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
        connectionString: opts.databaseUrl,
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
