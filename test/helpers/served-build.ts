import { createApp } from "../../api/app.ts";
import { KeyStore, openSqlClient } from "../../api/lib/key-store.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { buildRecorded } from "./build-once.ts";
import { createTestSchema } from "./pg-schema.ts";

/**
 * The builds published under data dir `dir`, served by an in-process app with a key store in a
 * throwaway Postgres schema `schemaName`: the app, its key store, a key allowed 10,000 requests per
 * minute, `req` (keyed Request through the app), `get` (keyed, or without a key when `key` is null;
 * parsed JSON), the published store, and `close` (closes the store, drops the schema). `nowMs`: the
 * app's clock (default the wall clock).
 */
export async function serveDir(dir: string, schemaName: string, opts: { nowMs?: () => number } = {}) {
  const schema = await createTestSchema(schemaName);
  const sql = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  const keys = new KeyStore(sql, "pepper-for-tests-0123456789");
  await keys.init();
  const token = (await keys.create({ name: "t", rateLimitPerMinute: 10000 }, { maxRateLimitPerMinute: 10000 })).token;
  const store = new PublishedStore(fsReader(dir), 0);
  const app = createApp({
    store,
    keys,
    limiter: new KeyRateLimiter(),
    corsOrigins: [],
    clockMode: "auto",
    ...(opts.nowMs ? { nowMs: opts.nowMs } : {}),
  });
  const req = (path: string, key: string | null = token) =>
    app.request(path, { headers: key === null ? {} : { "X-API-Key": key } });
  const get = async <T = unknown>(path: string, key: string | null = token) => {
    const res = await req(path, key);
    return { status: res.status, headers: res.headers, body: (await res.json()) as T };
  };
  const close = async () => {
    await sql.close();
    await schema.drop();
  };
  return { app, keys, token, req, get, store, close };
}

/** The recorded build (test/helpers/build-once.ts) served by {@link serveDir}, plus its dir and manifest. */
export async function serveRecordedBuild(prefix: string, schemaName: string) {
  const { dir, manifest } = await buildRecorded(prefix);
  return { dir, manifest, ...(await serveDir(dir, schemaName)) };
}
