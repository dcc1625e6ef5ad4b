import { KEY_CHANGES_CHANNEL, type Listen } from "../key-coherence.ts";

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

/** The state store's key tables, created in order (idempotent: `if not exists`). */
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
/** Bumps the change generation and notifies instances, in the statement that changed key `k` (a CTE returning `id`). */
export const NOTIFY_CHANGE = `g as (update api_key_changes set generation = generation + 1 where id = 1 and exists (select 1 from k) returning generation)
  select k.*, g.generation::text as generation, pg_notify('${KEY_CHANGES_CHANNEL}', g.generation::text || ' ' || k.id) as notified from k, g`;

/**
 * Creates the key tables (SCHEMA) when missing. On Postgres the script runs as one statement under a
 * transaction-scoped advisory lock (SCHEMA_LOCK), so instances starting together do not race; on
 * PGlite statement by statement. @throws the driver's error (the caller maps it).
 */
export async function createKeySchema(sql: SqlClient): Promise<void> {
  if (sql.kind === "postgres" && sql.exec) {
    await sql.exec(`select pg_advisory_xact_lock(${SCHEMA_LOCK}); ${SCHEMA.join(";\n")}`);
  } else {
    for (const stmt of SCHEMA) await sql.query(stmt);
  }
}
