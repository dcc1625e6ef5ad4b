import { createApp } from "../../api/app.ts";
import { KeyStore, openSqlClient } from "../../api/lib/key-store.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBuild } from "../../build/run-build.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import { buildRecorded, CAPTURE_DIR, RECORDED_AS_OF } from "./build-once.ts";
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

/**
 * The recorded build as of RECORDED_AS_OF (recorded captures of test/helpers/build-once.ts) made in a
 * fresh temp data dir (`prefix`) whose storage root `addCaptures` first fills with live captures
 * (the files `capture` writes), served by {@link serveDir} with schema `schemaName`: the dir, the
 * build's manifest and serveDir's fields; `close` also removes the dir. Logs are silenced.
 */
export async function serveRecordedBuildWith(
  prefix: string,
  schemaName: string,
  addCaptures: (sink: FsSink) => Promise<void>,
) {
  process.env.BALLAST_LOG = "silent";
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    const sink = new FsSink(dir);
    await addCaptures(sink);
    const { manifest } = await runBuild({ asOf: RECORDED_AS_OF, captureDir: CAPTURE_DIR, sink, warehousePath: null });
    const served = await serveDir(dir, schemaName);
    const close = async () => {
      await served.close();
      rmSync(dir, { recursive: true, force: true });
    };
    return { ...served, dir, manifest, close };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
