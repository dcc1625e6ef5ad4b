import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
// @ts-expect-error s3rver ships no types
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { type ObjectReader, PublishedStore, StorageUnavailableError } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { s3Reader } from "../../api/lib/s3-reader.ts";
import { blacklistSummaryArtifact } from "../../site-data/blacklist.ts";
import { mintBurnFlowsArtifact, mintBurnLedgerArtifact } from "../../site-data/mint-burn.ts";
import { SCHEDULE_STATUS_KEY } from "../../site-data/schedule-log.ts";
import { stablecoinsArtifact } from "../../site-data/stablecoins.ts";
import { must } from "../helpers/must.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";
import { coinListObjects } from "../helpers/telegram.ts";

/**
 * Published storage that fails under a serving build (issue 30 item 1): an object store that is
 * stopped answers its own 503 `Published storage temporarily unavailable` with `Retry-After: 30` on
 * JSON routes, and one that accepts connections and never answers costs a request (and
 * `/api/health`) at most the read deadline.
 */

const CREDS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };
let s3server: { run(): Promise<{ port: number }>; close(): Promise<void> } | null = null;
let dir: string;
let endpoint: string;
/** A TCP server that accepts connections and never answers (a hung object store). */
let silent: Server;
const sockets: Socket[] = [];
let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: SqlClient;
let keys: KeyStore;
let token: string;

beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  dir = mkdtempSync(join(tmpdir(), "ballast-storage-faults-"));
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: dir });
  s3server = server;
  endpoint = `http://127.0.0.1:${(await server.run()).port}`;
  const client = new S3Client({ endpoint, region: "us-east-1", forcePathStyle: true, credentials: CREDS });
  await client.send(new CreateBucketCommand({ Bucket: "ballast" }));
  for (const [Key, Body] of coinListObjects())
    await client.send(new PutObjectCommand({ Bucket: "ballast", Key, Body }));
  client.destroy();
  silent = createServer((s) => {
    sockets.push(s);
    s.on("error", () => undefined);
  });
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
  schema = await createTestSchema("ballast_storage_faults");
  sql = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  keys = new KeyStore(sql, "pepper-for-tests-0123456789");
  await keys.init();
  token = (await keys.create({ name: "t", rateLimitPerMinute: 10000 }, { maxRateLimitPerMinute: 10000 })).token;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  silent?.close();
  await s3server?.close();
  await sql?.close();
  await schema?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * An app over the bucket whose reads go to `reader.current` (swapped by a test), with the serving
 * build loaded and no file of it read yet; the pointer is not re-checked during the test.
 */
async function appOverBucket(reader: { current: ObjectReader }) {
  const store = new PublishedStore((key) => reader.current(key), 600_000, Date.now, { maxRefreshWaitMs: 250 });
  must(await store.build(), "the build in the bucket");
  const app = createApp({ store, keys, limiter: new KeyRateLimiter(), corsOrigins: [], clockMode: "wall" });
  return { store, app };
}

describe("published storage failing under a serving build", () => {
  it("stopped: an unread file of a JSON route answers 503 Published storage temporarily unavailable, Retry-After 30", async () => {
    const s3 = s3Reader({ endpoint, bucket: "ballast", region: "us-east-1", ...CREDS });
    const { app } = await appOverBucket({ current: s3.read });
    await must(s3server, "the running S3 server").close();
    s3server = null;
    const res = await app.request("/api/stablecoins", { headers: { "X-API-Key": token } });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("30");
    expect(await res.json()).toEqual({ error: "Published storage temporarily unavailable" });
    s3.close();
  });

  it("hung (accepts, never answers): an unread file and /api/health answer within the read deadline", async () => {
    const port = (silent.address() as { port: number }).port;
    // The pointer and manifest come from memory; every later read goes to the hung store, whose
    // per-attempt request timeout is a minute (a dependency that hangs): only the 2 s read deadline
    // (the default) can end a read. Before it, one read took maxAttempts × requestTimeout.
    const objects = coinListObjects();
    const reader: { current: ObjectReader } = { current: async (key) => objects.get(key) ?? null };
    const { app } = await appOverBucket(reader);
    const hung = s3Reader({
      endpoint: `http://127.0.0.1:${port}`,
      bucket: "ballast",
      region: "us-east-1",
      requestTimeoutMs: 60_000,
      ...CREDS,
    });
    reader.current = hung.read;
    expect(stablecoinsArtifact.outputs.main.path).toBe("site-data/stablecoins.json");

    // Liveness bounds, not speed claims: the store hangs for minutes, the answers come within 10 s.
    const t0 = Date.now();
    const res = await app.request("/api/stablecoins", { headers: { "X-API-Key": token } });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("30");
    expect(await res.json()).toEqual({ error: "Published storage temporarily unavailable" });
    expect(Date.now() - t0).toBeLessThan(10_000);

    const t1 = Date.now();
    const health = await app.request("/api/health");
    expect(health.status).toBe(200);
    expect(Date.now() - t1).toBeLessThan(10_000);
    hung.close();
  });
});

describe("/api/health over storage that does not answer", () => {
  it("reads its inputs at once (one read deadline, not one per input) and keeps no result of a failed read", async () => {
    // The build lists the three on-chain artifacts health reads; with the scheduler's run log that
    // is four reads. The store holds each until the test releases it.
    const objects = coinListObjects();
    const manifestKey = must(
      [...objects.keys()].find((k) => k.endsWith("/manifest.json")),
      "the manifest",
    );
    const manifest = JSON.parse(Buffer.from(must(objects.get(manifestKey), "manifest")).toString("utf8"));
    const onchain = [blacklistSummaryArtifact, mintBurnLedgerArtifact, mintBurnFlowsArtifact].map(
      (a) => a.outputs.main.path,
    );
    for (const path of onchain)
      manifest.files.push({ ...manifest.files[0], path, artifact: path, rows: null, dataAsOf: null });
    objects.set(manifestKey, Buffer.from(JSON.stringify(manifest)));
    const held: { key: string; fail(): void }[] = [];
    const reader: ObjectReader = async (key) => {
      if (key === "latest.json" || key === manifestKey) return objects.get(key) ?? null;
      return new Promise<Uint8Array | null>((_, reject) =>
        held.push({ key, fail: () => reject(new StorageUnavailableError(`s3://ballast/${key}`, "ETIMEDOUT")) }),
      );
    };
    const { app } = await appOverBucket({ current: reader });
    const onchainKeys = onchain.map((p) => `builds/${manifest.buildId}/${p}`);
    /** Resolves once every read of `keys` is waiting at the store at the same time. */
    const allWaiting = async (keys: string[]) => {
      while (!keys.every((k) => held.some((h) => h.key === k))) await new Promise((r) => setTimeout(r, 10));
    };

    // Sequential reads (before) never had more than one waiting.
    const first = app.request("/api/health");
    await allWaiting([SCHEDULE_STATUS_KEY, ...onchainKeys]);
    for (const h of held.splice(0)) h.fail();
    expect((await first).status).toBe(200);
    // A failed read is not kept for the build: the next health call reads the on-chain artifacts again
    // (the run log's failed read may be reused for its 1 s TTL).
    const second = app.request("/api/health");
    await allWaiting(onchainKeys);
    for (const h of held.splice(0)) h.fail();
    const res = await second;
    expect(res.status).toBe(200);
    expect((await res.json()).blacklist).toBeNull();
  });
});
