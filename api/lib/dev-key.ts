import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KeyStore } from "./key-store.ts";

/** Name of the development key `startServer({ devKey: true })` keeps. */
export const DEV_KEY_NAME = "development";

/**
 * File that keeps the development key of one state store, under `<dataDir>/state/`: `dev-key` for the
 * embedded store, `dev-key.pg-<12 hex>` for a Postgres store, where the hex digits hash the store's
 * identity (protocol, host, port, database, user and every URL parameter except `application_name`;
 * never the password). So a checkout switched between embedded and Postgres modes, or between two
 * databases, keeps one development key per store instead of minting one at each switch.
 */
export function devKeyPath(dataDir: string, databaseUrl?: string): string {
  if (!databaseUrl) return join(dataDir, "state", "dev-key");
  let identity = databaseUrl;
  try {
    const u = new URL(databaseUrl);
    const params = [...u.searchParams.entries()].filter(([k]) => k !== "application_name").sort();
    identity = JSON.stringify([u.protocol, u.hostname, u.port, u.pathname, decodeURIComponent(u.username), params]);
  } catch {
    // Not a URL (a libpq keyword string): its whole text is the identity.
  }
  const id = createHash("sha256").update(identity).digest("hex").slice(0, 12);
  return join(dataDir, "state", `dev-key.pg-${id}`);
}

/**
 * The development key of `make run` for the store `keys` (file: {@link devKeyPath}): the token kept
 * there (mode 0600) when it still verifies as an active standard key (its limit is set to `limit`
 * requests per minute when it differs), else a new `standard` key of `limit` requests per minute,
 * whose token replaces the file. So repeated runs reuse one key per store instead of adding one each time.
 * @throws StateStoreUnavailableError when the store cannot be asked.
 */
export async function developmentKey(
  keys: KeyStore,
  path: string,
  limit: number,
): Promise<{ token: string; reused: boolean; path: string }> {
  const kept = existsSync(path) ? readFileSync(path, "utf8").trim() : "";
  if (kept) {
    const record = await keys.verify(kept, Math.floor(Date.now() / 1000));
    if (record && record.tier === "standard") {
      if (record.rateLimitPerMinute !== limit)
        await keys.update(record.id, { rateLimitPerMinute: limit }, { maxRateLimitPerMinute: limit });
      return { token: kept, reused: true, path };
    }
  }
  const { token } = await keys.create(
    { name: DEV_KEY_NAME, tier: "standard", rateLimitPerMinute: limit },
    { maxRateLimitPerMinute: limit },
  );
  mkdirSync(join(path, ".."), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${token}\n`, { mode: 0o600 });
  renameSync(tmp, path);
  return { token, reused: false, path };
}
