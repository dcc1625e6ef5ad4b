import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CopyObjectCommand,
  CreateBucketCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import pLimit from "p-limit";
// @ts-expect-error s3rver ships no types
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../api/server.ts";
import { runBuild } from "../../build/run-build.ts";
import { S3Sink } from "../../build/sinks/s3.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { CAPTURE_DIR, RECORDED_AS_OF } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";
import { freePort, OwnRedis } from "../helpers/redis-server.ts";

/**
 * Scaling out (issue 21 item 3): two API instances (startServer, as `make run` starts one) on one
 * s3rver bucket, one Postgres schema and one Redis, serving a real build the build's S3 sink
 * published there. One real build (~25-35 s on an idle machine); the second build is the same files
 * copied server-side under a new build id with its own manifest and pointer (what a restore or a
 * promotion between buckets writes), so the pointer switch costs a copy instead of a second build.
 */

const BUCKET = "ballast";
const CREDS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

let s3server: { run(): Promise<{ port: number }>; close(): Promise<void> } | null = null;
let s3dir: string;
let workDir: string;
let endpoint: string;
let client: S3Client;
let schema: Awaited<ReturnType<typeof createTestSchema>>;
let redis: OwnRedis;
let manifest: BuildManifest;
let buildMs: number;
const servers: RunningServer[] = [];
let token: string;

const base = (i: number) => `http://127.0.0.1:${servers[i].port}`;
const get = (i: number, path: string, headers: Record<string, string> = {}) =>
  fetch(base(i) + path, { headers: { "X-API-Key": token, ...headers } });
const bytesOf = async (res: Response) => Buffer.from(await res.arrayBuffer());
/** A JSON body without its `_meta` block (data age and freshness move with the clock between two requests). */
const dataOf = async (res: Response) => {
  const body = (await res.json()) as Record<string, unknown>;
  delete body._meta;
  return body;
};
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const health = async (i: number) =>
  (await (await fetch(`${base(i)}/api/health`)).json()) as { clock: { buildId: string | null }; warnings: string[] };

beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  workDir = mkdtempSync(join(tmpdir(), "ballast-s3-serving-"));
  s3dir = join(workDir, "s3");
  const server = new S3rver({ port: await freePort(), address: "127.0.0.1", silent: true, directory: s3dir });
  s3server = server;
  endpoint = `http://127.0.0.1:${(await server.run()).port}`;
  client = new S3Client({ endpoint, region: "us-east-1", forcePathStyle: true, credentials: CREDS });
  await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
  [schema, redis] = await Promise.all([createTestSchema("s3serving"), OwnRedis.start()]);

  const t0 = Date.now();
  const sink = new S3Sink({ endpoint, bucket: BUCKET, region: "us-east-1", ...CREDS });
  ({ manifest } = await runBuild({
    asOf: RECORDED_AS_OF,
    captureDir: CAPTURE_DIR,
    sink,
    warehousePath: join(workDir, "warehouse.duckdb"),
  }));
  buildMs = Date.now() - t0;

  for (const name of ["a", "b"]) {
    servers.push(
      await startServer({
        PORT: 0,
        HOST: "127.0.0.1",
        CLOCK: "auto",
        BALLAST_DATA_DIR: join(workDir, `instance-${name}`),
        DATABASE_URL: schema.url,
        API_KEY_PEPPER: "pepper-for-s3-serving-test-0123",
        REDIS_URL: redis.url,
        STORAGE_DRIVER: "s3",
        S3_ENDPOINT: endpoint,
        S3_BUCKET: BUCKET,
        S3_REGION: "us-east-1",
        S3_ACCESS_KEY_ID: CREDS.accessKeyId,
        S3_SECRET_ACCESS_KEY: CREDS.secretAccessKey,
        S3_FORCE_PATH_STYLE: true,
        STATUS_RECORD_INTERVAL_SEC: 0,
        TELEGRAM_ALERTS_INTERVAL_SEC: 0,
      }),
    );
  }
  token = (
    await servers[0].keys.create({ name: "s3-serving", rateLimitPerMinute: 10_000 }, { maxRateLimitPerMinute: 10_000 })
  ).token;
});

afterAll(async () => {
  await Promise.allSettled(servers.map((s) => s.close()));
  client?.destroy();
  await s3server?.close().catch(() => undefined);
  await redis?.stop();
  await schema?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

describe("two API instances on one S3 bucket, Postgres and Redis", () => {
  it("serve the same build and the same bytes (JSON route, static dataset with its stored br sibling, the DuckDB file)", async () => {
    expect(buildMs).toBeGreaterThan(0);
    for (const i of [0, 1]) expect((await health(i)).clock.buildId).toBe(manifest.buildId);

    const list = await Promise.all([0, 1].map((i) => get(i, "/api/stablecoins")));
    expect(list.map((r) => r.status)).toEqual([200, 200]);
    const [la, lb] = await Promise.all(list.map(dataOf));
    expect(la).toEqual(lb);
    expect(Object.keys(la).length).toBeGreaterThan(0);

    const dated = must(
      manifest.files.find(
        (f) => /^datasets\/[a-z0-9-]+\/\d{4}-\d{2}-\d{2}\.csv$/.test(f.path) && f.encodings?.includes("br"),
      ),
      "a dated dataset CSV with a brotli sibling",
    );
    expect(dated).toBeDefined();
    const topic = dated.path.split("/")[1];
    for (const i of [0, 1]) {
      const plain = await get(i, `/datasets/${topic}/latest.csv`, { "Accept-Encoding": "identity" });
      expect(plain.status).toBe(200);
      expect(sha256(await bytesOf(plain))).toBe(dated.sha256);
      // The stored brotli sibling is sent as it is in the bucket (fetch decodes it, so read the raw object to compare).
      const br = await fetch(`${base(i)}/datasets/${topic}/latest.csv`, { headers: { "Accept-Encoding": "br" } });
      expect(br.headers.get("content-encoding")).toBe("br");
      expect(sha256(await bytesOf(br))).toBe(dated.sha256);
    }
    const stored = await client.send(
      new GetObjectCommand({ Bucket: BUCKET, Key: `builds/${manifest.buildId}/${dated.path}.br` }),
    );
    expect((await must(stored.Body, "the stored brotli object's body").transformToByteArray()).length).toBeGreaterThan(
      0,
    );

    const db = must(
      manifest.files.find((f) => f.path === "ballast.duckdb"),
      "ballast.duckdb in the manifest",
    );
    const dbs = await Promise.all(
      [0, 1].map(async (i) =>
        sha256(await bytesOf(await fetch(`${base(i)}/ballast.duckdb`, { headers: { "Accept-Encoding": "identity" } }))),
      ),
    );
    expect(dbs).toEqual([db.sha256, db.sha256]);
  });

  it("answer a missing object as on the filesystem: 404 for a dated dataset or snapshot that was never published", async () => {
    const dated = must(
      manifest.files.find((f) => /^datasets\/[a-z0-9-]+\/\d{4}-\d{2}-\d{2}\.csv$/.test(f.path)),
      "a dated dataset CSV in the manifest",
    );
    const topic = dated.path.split("/")[1];
    for (const i of [0, 1]) {
      expect((await get(i, `/datasets/${topic}/1999-01-01.csv`)).status).toBe(404);
      expect((await get(i, "/api/snapshots/1999-01-01.json")).status).toBe(404);
    }
  });

  it("keep a quota exact across instances: a 10/min key gets exactly 10 × 200 then 429, alternating instances", async () => {
    const { token: limited } = await servers[1].keys.create(
      { name: "ten-per-minute", rateLimitPerMinute: 10 },
      { maxRateLimitPerMinute: 10 },
    );
    const statuses: number[] = [];
    for (let n = 0; n < 16; n++) {
      const res = await fetch(`${base(n % 2)}/api/stablecoins`, { headers: { "X-API-Key": limited } });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).toEqual([...Array(10).fill(200), ...Array(6).fill(429)]);
  });

  it("switch together when a new build's pointer lands", async () => {
    const nextId = `${manifest.buildId.slice(0, -7)}5e3c0de`;
    const src = `builds/${manifest.buildId}/`;
    // The build's files without their stored br/gzip siblings (a third of the objects): the new
    // manifest lists no siblings, so compressed answers of the new build are encoded on the fly.
    const keys = manifest.files.map((f) => src + f.path);
    // Server-side copies, 16 at a time (s3rver answers InternalError now and then at 32; one retry).
    const limit = pLimit(16);
    const copy = (k: string) =>
      client.send(
        new CopyObjectCommand({
          Bucket: BUCKET,
          CopySource: `${BUCKET}/${k}`,
          Key: `builds/${nextId}/${k.slice(src.length)}`,
        }),
      );
    const t0 = Date.now();
    const failed: string[] = [];
    await Promise.all(
      keys.map((k) =>
        limit(() =>
          copy(k)
            .catch(() => copy(k))
            .catch((e) => {
              failed.push(`${k}: ${e}`);
            }),
        ),
      ),
    );
    expect(failed.slice(0, 5)).toEqual([]);
    const copyMs = Date.now() - t0;
    const manifestKey = `builds/${nextId}/manifest.json`;
    await client.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: manifestKey,
        Body: JSON.stringify({
          ...manifest,
          buildId: nextId,
          files: manifest.files.map(({ encodings: _, ...f }) => f),
        }),
      }),
    );
    const landed = Date.now();
    await client.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: "latest.json",
        Body: JSON.stringify({ buildId: nextId, asOf: manifest.asOf, manifest: manifestKey }),
      }),
    );

    const switchedMs: number[] = [];
    for (const i of [0, 1]) {
      while ((await health(i)).clock.buildId !== nextId) {
        expect(Date.now() - landed).toBeLessThan(60_000); // POINTER_REFRESH_MS is 1000: ~1 s expected; a backstop, not a speed claim
        await new Promise((r) => setTimeout(r, 50));
      }
      switchedMs.push(Date.now() - landed);
    }
    console.info(
      `[s3-serving] build ${buildMs} ms; ${keys.length} objects copied in ${copyMs} ms; instances on the new pointer after ${switchedMs.join(" / ")} ms`,
    );
    const after = await Promise.all([0, 1].map(async (i) => dataOf(await get(i, "/api/stablecoins"))));
    expect(after[0]).toEqual(after[1]);
    const dated = must(
      manifest.files.find((f) => /^datasets\/[a-z0-9-]+\/\d{4}-\d{2}-\d{2}\.csv$/.test(f.path)),
      "a dated dataset CSV in the manifest",
    );
    for (const i of [0, 1]) {
      const res = await fetch(`${base(i)}/datasets/${dated.path.split("/")[1]}/latest.csv`, {
        headers: { "Accept-Encoding": "br" },
      });
      expect(res.status).toBe(200);
      expect(sha256(await bytesOf(res))).toBe(dated.sha256);
    }
  });

  it("keep serving the build they have when the object store is down, and answer fast", async () => {
    const buildId = (await health(0)).clock.buildId;
    const cached = await Promise.all([0, 1].map(async (i) => dataOf(await get(i, "/api/stablecoins"))));
    await must(s3server, "the running S3 server").close();
    s3server = null;

    for (const i of [0, 1]) {
      const t0 = Date.now();
      let h = await health(i);
      while (!h.warnings.some((w) => w.startsWith("published storage unreadable"))) {
        expect(Date.now() - t0).toBeLessThan(60_000); // the next pointer check (1 s) shows it; a backstop for a hang
        await new Promise((r) => setTimeout(r, 100));
        h = await health(i);
      }
      expect(h.clock.buildId).toBe(buildId);
      expect(h.warnings.find((w) => w.startsWith("published storage unreadable"))).toMatch(
        /s3:\/\/ballast\/latest\.json: ECONNREFUSED/,
      );

      const res = await get(i, "/api/stablecoins");
      expect(res.status).toBe(200);
      expect(await dataOf(res)).toEqual(cached[i]);

      // A file this instance never read: 503 with Retry-After, within the S3 deadlines (liveness bound, not a speed claim).
      const t1 = Date.now();
      const sheet = must(
        manifest.files.find((f) => f.path.startsWith("sheets/")),
        "a sheet in the manifest",
      );
      const miss = await fetch(`${base(i)}/${sheet.path}`);
      expect(miss.status).toBe(503);
      expect(miss.headers.get("retry-after")).toBe("30");
      expect(await miss.json()).toEqual({ error: "Published storage temporarily unavailable" });
      expect(Date.now() - t1).toBeLessThan(5000);
    }
  });
});
