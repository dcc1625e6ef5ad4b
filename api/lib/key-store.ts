import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";

/** Literal prefix of Ballast API keys (spec 5.1 with `bl_live`). */
export const API_KEY_PATTERN = /^bl_live_([0-9a-f]{16})_([A-Za-z0-9_-]{32})$/;

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

/**
 * API keys in the state store (PGlite by default, Postgres via DATABASE_URL). Only the prefix and
 * HMAC-SHA256(pepper, secret) are stored; the plaintext token is returned once by `create`.
 */
export class KeyStore {
  constructor(private readonly sql: SqlClient, private readonly pepper: string) {}

  async init(): Promise<void> {
    await this.sql.query(SCHEMA);
  }

  private hash(secret: string): string {
    return createHmac("sha256", this.pepper).update(secret).digest("hex");
  }

  /** Creates a key and returns its record plus the plaintext token (shown once). */
  async create(input: { name: string; tier?: string; rateLimitPerMinute?: number; ownerEmail?: string; expiresAt?: number | null }): Promise<{ record: ApiKeyRecord; token: string }> {
    const prefix = randomBytes(8).toString("hex");
    const secret = randomBytes(24).toString("base64url");
    const id = randomUUID();
    const tier = input.tier ?? "standard";
    const limit = input.rateLimitPerMinute ?? 120;
    await this.sql.query(
      "insert into api_keys (id, key_prefix, secret_hash, name, owner_email, tier, rate_limit_per_minute, expires_at, created_at) values ($1,$2,$3,$4,$5,$6,$7,$8,$9)",
      [id, prefix, this.hash(secret), input.name, input.ownerEmail ?? null, tier, limit, input.expiresAt ?? null, Math.floor(Date.now() / 1000)],
    );
    return {
      record: { id, keyPrefix: prefix, name: input.name, tier, rateLimitPerMinute: limit, isActive: true, expiresAt: input.expiresAt ?? null },
      token: `bl_live_${prefix}_${secret}`,
    };
  }

  /**
   * Verifies a token: shape, prefix lookup, constant-time hash comparison, active, not expired.
   * Returns the record or null. Throws when the store is unreachable (callers answer 503).
   */
  async verify(token: string, nowSec: number): Promise<ApiKeyRecord | null> {
    const m = API_KEY_PATTERN.exec(token);
    if (!m) return null;
    const { rows } = await this.sql.query<{ id: string; key_prefix: string; secret_hash: string; name: string; tier: string; rate_limit_per_minute: number; is_active: boolean; expires_at: string | number | null }>(
      "select id, key_prefix, secret_hash, name, tier, rate_limit_per_minute, is_active, expires_at from api_keys where key_prefix = $1",
      [m[1]],
    );
    const row = rows[0];
    if (!row) return null;
    const a = Buffer.from(row.secret_hash, "hex");
    const b = Buffer.from(this.hash(m[2]), "hex");
    if (a.length !== b.length || !timingSafeEqual(a, b)) return null;
    const expiresAt = row.expires_at === null ? null : Number(row.expires_at);
    if (!row.is_active || (expiresAt !== null && expiresAt <= nowSec)) return null;
    return { id: row.id, keyPrefix: row.key_prefix, name: row.name, tier: row.tier, rateLimitPerMinute: Number(row.rate_limit_per_minute), isActive: row.is_active, expiresAt };
  }

  /** Sets isActive false; the key stops working once verification caches expire (≤ 5 s). */
  async deactivate(id: string): Promise<void> {
    await this.sql.query("update api_keys set is_active = false where id = $1", [id]);
  }
}

/** Opens the state store: Postgres when `databaseUrl` is set, else PGlite in `pgliteDir`. */
export async function openSqlClient(opts: { databaseUrl?: string; pgliteDir: string }): Promise<SqlClient> {
  if (opts.databaseUrl) {
    const { default: pg } = await import("pg");
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 4 });
    return { query: (sql, params) => pool.query(sql, params as unknown[]) as never, close: () => pool.end() };
  }
  const { PGlite } = await import("@electric-sql/pglite");
  const db = await PGlite.create(opts.pgliteDir);
  return { query: (sql, params) => db.query(sql, params as unknown[]) as never, close: () => db.close() };
}
