/**
 * The state store of API keys, by concern: key records, tiers and input validation
 * (key-store/records.ts), the SQL schema and client surface (key-store/schema.ts), the per-instance
 * verification cache (key-store/verification-cache.ts), the store itself (key-store/store.ts) and its
 * opener, embedded PGlite or Postgres (key-store/open.ts). Importers use this module.
 */
export {
  API_KEY_PATTERN,
  type ApiKeyListing,
  type ApiKeyRecord,
  DEFAULT_APPLICATION_NAME,
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  DEFAULT_STATE_TIMEOUT_MS,
  DONOR_RATE_LIMIT_PER_MINUTE,
  ISSUABLE_TIERS,
  type IssuableTier,
  KEY_CACHE_MAX,
  KEY_OUTAGE_GRACE_MS,
  KEY_TIERS,
  KeyInputError,
  type KeyInputField,
  type KeyPatch,
  type KeyTier,
  maskToken,
  type NewKeyInput,
  RATE_LIMIT_MAX,
  RATE_LIMIT_MIN,
  SELF_SERVE_RATE_LIMIT_PER_MINUTE,
  SELF_SERVE_TTL_SEC,
  StateStoreUnavailableError,
  tierRateLimit,
  type ValidKeyInput,
  validateKeyInput,
} from "./key-store/records.ts";
export type { SqlClient } from "./key-store/schema.ts";
export {
  type KeyAuthResult,
  type KeyCacheMode,
  KeyStore,
  type KeyStoreOptions,
  type KeyStoreStatus,
  type Peppers,
} from "./key-store/store.ts";
export {
  embeddedPepper,
  type KeyStoreConfig,
  openKeyStore,
  openSqlClient,
  type SqlClientOptions,
} from "./key-store/open.ts";
