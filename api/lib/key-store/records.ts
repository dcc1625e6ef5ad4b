import { type DependencyReason, dependencyReason } from "../dependency-reason.ts";

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

/** A row of `api_keys` as the driver returns it (bigint columns may arrive as strings). */
export type KeyRow = {
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
/** The `api_keys` columns of a KeyRow, in select-list form. */
export const COLUMNS =
  "id, key_prefix, secret_hash, name, owner_email, tier, rate_limit_per_minute, is_active, expires_at, created_at, updated_at";

/** A Unix-seconds column (bigint may arrive as a string), null kept null. */
const num = (v: string | number | null) => (v === null ? null : Number(v));

/** The limit a tier enforces: fixed for donor and self-serve, the stored per-key value for standard. */
export function tierRateLimit(tier: string, stored: number): number {
  return tier === "donor"
    ? DONOR_RATE_LIMIT_PER_MINUTE
    : tier === "self-serve"
      ? SELF_SERVE_RATE_LIMIT_PER_MINUTE
      : stored;
}

/** The record of a stored row (limit by tier, see `tierRateLimit`). */
export function toRecord(row: KeyRow): ApiKeyRecord {
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

/** The operator listing of a stored row (record, owner, times, masked token). */
export function toListing(row: KeyRow): ApiKeyListing {
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

/** A key name: 1–80 characters after trimming. @throws KeyInputError (`name`). */
export function validName(raw: string | undefined): string {
  const name = (raw ?? "").trim();
  if (!name || name.length > 80)
    throw new KeyInputError("name", `Invalid name ${JSON.stringify(raw ?? "")}: expected 1 to 80 characters`);
  return name;
}

/** An issuable tier (ISSUABLE_TIERS). @throws KeyInputError (`tier`). */
export function validTier(raw: string): IssuableTier {
  if (!(ISSUABLE_TIERS as readonly string[]).includes(raw)) {
    throw new KeyInputError(
      "tier",
      `Invalid tier ${JSON.stringify(raw)}: expected one of ${ISSUABLE_TIERS.join(", ")} (self-serve issuance is retired)`,
    );
  }
  return raw as IssuableTier;
}

/** A per-minute limit: an integer (or decimal string) from RATE_LIMIT_MIN to `maxRateLimitPerMinute` (at most 2^31 − 1). @throws KeyInputError (`rateLimitPerMinute`). */
export function validLimit(raw: number | string, maxRateLimitPerMinute: number): number {
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

/** An owner email: trimmed, lower-cased, at most 200 characters, or null. @throws KeyInputError (`ownerEmail`). */
export function validEmail(raw: string | null | undefined): string | null {
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
export function donorLimit(raw: number | string | undefined): number {
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
