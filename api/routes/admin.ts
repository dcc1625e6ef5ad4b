import type { RouteDecl } from "./route.ts";

/**
 * Operator (admin) path families of spec 4.5. They live on the operator host only: on the public
 * host every path in these families is 404 before key authentication (spec 5.2), so a public key
 * cannot reach them. An entry ending in `-` is a prefix family (`/api/backfill-…`); others match the
 * path and everything under it.
 */
export const ADMIN_PATH_FAMILIES = [
  "/api/admin", "/api/api-keys", "/api/backfill-", "/api/reclassify-atomic-roundtrips", "/api/audit-depeg-history",
  "/api/trigger-digest", "/api/reset-blacklist-sync", "/api/remediate-blacklist-amount-gaps", "/api/discovery-candidates",
];

/**
 * Operator routes declared on the admin lane. The lane answers 404 on the public host; the
 * operator host and its access-JWT check come with the access issue.
 */
export const ADMIN_ROUTES: RouteDecl[] = [
  {
    kind: "json", operationId: "debugSyncState", method: "GET", path: "/api/debug-sync-state", lane: "admin", tag: "admin", cache: "no-store", meta: false, cacheable: false,
    notYetAvailable: "debug-sync-state (operator lane)",
    summary: "Blacklist sync cursors (operator lane only)",
    description: "Array of `{config_key, last_block}` on the operator host. 404 on the public host, before key authentication (spec 5.2).",
  },
];
