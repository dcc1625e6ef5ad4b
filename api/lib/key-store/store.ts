import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { CircuitBreaker, type CircuitBreakerOptions, type CircuitState } from "../circuit-breaker.ts";
import type { DependencyReason } from "../dependency-reason.ts";
import { DEFAULT_LEASE_MS, KeyCoherence } from "../key-coherence.ts";
import { apiLog, errorMessage } from "../log.ts";
import {
  API_KEY_PATTERN,
  type ApiKeyListing,
  type ApiKeyRecord,
  COLUMNS,
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  DEFAULT_STATE_TIMEOUT_MS,
  DONOR_RATE_LIMIT_PER_MINUTE,
  donorLimit,
  KEY_OUTAGE_GRACE_MS,
  KeyInputError,
  type KeyPatch,
  type KeyRow,
  type KeyTier,
  type NewKeyInput,
  RATE_LIMIT_MAX,
  SELF_SERVE_RATE_LIMIT_PER_MINUTE,
  SELF_SERVE_TTL_SEC,
  StateStoreUnavailableError,
  tierRateLimit,
  toListing,
  toRecord,
  validateKeyInput,
  validEmail,
  validLimit,
  validName,
  validTier,
} from "./records.ts";
import { createKeySchema, NOTIFY_CHANGE, type SqlClient } from "./schema.ts";
import { type CacheEntry, VerificationCache } from "./verification-cache.ts";

/** Current Unix time, seconds. */
const nowSec = () => Math.floor(Date.now() / 1000);

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether a store error (or its cause) is a unique-key violation (SQLSTATE 23505). */
function isUniqueViolation(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 4; e = e.cause as typeof e, i++)
    if (e.code === "23505") return true;
  return false;
}

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
  /** Verified standard keys (spec 5.5), served while `coherent`. */
  private readonly cache = new VerificationCache();
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
    this.schemaReady ??= createKeySchema(this.sql).catch((err: unknown) => {
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
    this.cache.evict(id);
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
    const evictions = this.cache.evictions;
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
    if (record.tier === "standard" && this.cache.evictions === evictions)
      this.cache.remember(token, record, epoch, nowMs);
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
