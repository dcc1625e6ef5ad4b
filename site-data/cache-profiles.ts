// The Cache-Control profiles, declared below the API so that artifact routes (site-data/contract.ts)
// name them without importing the API; api/lib/freshness.ts serves them. Imports nothing.

/** Cache-Control profiles (spec 8). */
export const CACHE_PROFILES = {
  realtime: "public, s-maxage=60, max-age=10",
  "producer-backed": "public, s-maxage=300, max-age=60, stale-while-revalidate=300",
  standard: "public, s-maxage=300, max-age=60",
  custom: "public, s-maxage=300, max-age=300",
  "per-coin": "public, s-maxage=300, max-age=10",
  slow: "public, s-maxage=3600, max-age=300",
  archive: "public, s-maxage=86400, max-age=3600",
  "immutable-snapshot": "public, s-maxage=31536000, max-age=31536000, immutable",
  "public-status": "public, max-age=60",
  "og-image": "public, max-age=900, s-maxage=900",
  "reserve-live": "public, s-maxage=3600, max-age=300",
  "reserve-live-stale": "public, s-maxage=1800, max-age=120",
  "reserve-fallback": "public, s-maxage=300, max-age=60",
  "no-store": "no-store",
} as const;
/** Name of one Cache-Control profile (a route's or an artifact route's `cache`). */
export type CacheProfile = keyof typeof CACHE_PROFILES;
