import { HttpError } from "./http-error.ts";
import type { ApiKeyListing, IssuableTier, KeyStore } from "./key-store.ts";
import { apiLog, errorMessage } from "./log.ts";

/** Fields `POST /api/api-keys/:id/update` may change (spec 4.5), already validated. */
export interface KeyPatch {
  name?: string;
  ownerEmail?: string | null;
  tier?: IssuableTier;
  rateLimitPerMinute?: number;
  isActive?: boolean;
}

type NativeUpdate = (id: string, patch: KeyPatch) => Promise<unknown>;

/**
 * Applies `patch` to key `id` and returns its listing (masked token), or null when no key has that id.
 * Uses `KeyStore.update` when the key store has one; until then a thin update of the same `api_keys`
 * columns through the store's SQL client (no hashes or secrets are touched).
 * @throws HttpError 503 when the state store cannot be reached.
 */
export async function updateKey(keys: KeyStore, id: string, patch: KeyPatch): Promise<ApiKeyListing | null> {
  const native = (keys as unknown as { update?: NativeUpdate }).update;
  if (typeof native === "function") {
    const out = await native.call(keys, id, patch);
    if (out === null || out === false) return null;
  } else {
    const columns: [string, unknown][] = [];
    if (patch.name !== undefined) columns.push(["name", patch.name]);
    if (patch.ownerEmail !== undefined) columns.push(["owner_email", patch.ownerEmail]);
    if (patch.tier !== undefined) columns.push(["tier", patch.tier]);
    if (patch.rateLimitPerMinute !== undefined) columns.push(["rate_limit_per_minute", patch.rateLimitPerMinute]);
    if (patch.isActive !== undefined) columns.push(["is_active", patch.isActive]);
    const set = columns.map(([c], i) => `${c} = $${i + 2}`).join(", ");
    try {
      const { rows } = await keys.sqlClient.query(`update api_keys set ${set} where id = $1 returning id`, [id, ...columns.map(([, v]) => v)]);
      if (rows.length === 0) return null;
    } catch (err) {
      apiLog("warn", "ops", "key update failed: state store unavailable", { error: errorMessage(err) });
      throw new HttpError(503, "Public API temporarily unavailable", { "Retry-After": "60" });
    }
  }
  return (await keys.list()).find((k) => k.id === id) ?? null;
}
