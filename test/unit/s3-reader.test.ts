import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
// @ts-expect-error s3rver ships no types
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseApiConfig } from "../../api/config.ts";
import { PublishedStore, StorageUnavailableError } from "../../api/lib/published.ts";
import { s3Reader } from "../../api/lib/s3-reader.ts";
import { openStorageReader } from "../../api/lib/storage.ts";
import { must } from "../helpers/must.ts";

const CREDS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };
let server: { run(): Promise<{ port: number }>; close(): Promise<void> };
let dir: string;
let endpoint: string;
let client: S3Client;
/** A TCP server that accepts connections and never answers (a hung object store). */
let silent: Server;
const sockets: Socket[] = [];

const put = (Key: string, Body: string | Uint8Array) =>
  client.send(new PutObjectCommand({ Bucket: "ballast", Key, Body }));
const text = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString("utf8"));

beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  dir = mkdtempSync(join(tmpdir(), "ballast-s3-reader-"));
  server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: dir });
  endpoint = `http://127.0.0.1:${(await server.run()).port}`;
  client = new S3Client({ endpoint, region: "us-east-1", forcePathStyle: true, credentials: CREDS });
  await client.send(new CreateBucketCommand({ Bucket: "ballast" }));
  silent = createServer((s) => {
    sockets.push(s);
    s.on("error", () => undefined);
  });
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  silent?.close();
  client?.destroy();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("s3Reader (GetObject against s3rver)", () => {
  it("reads an object's bytes, null for a missing key, and keeps binary bytes intact", async () => {
    await put("builds/b1/site-data/a.json", '{"a":1}\n');
    await put("builds/b1/site-data/a.json.br", new Uint8Array([0, 255, 1, 254]));
    await put("empty.txt", "");
    const r = s3Reader({ endpoint, bucket: "ballast", region: "us-east-1", ...CREDS });
    expect(text(await r.read("builds/b1/site-data/a.json"))).toBe('{"a":1}\n');
    expect([...must(await r.read("builds/b1/site-data/a.json.br"), "a.json.br")]).toEqual([0, 255, 1, 254]);
    expect(await r.read("builds/b1/site-data/nope.json")).toBeNull();
    expect(must(await r.read("empty.txt"), "empty.txt").length).toBe(0);
    expect(r.describe("latest.json")).toBe("s3://ballast/latest.json");
    r.close();
  });

  it("reads byte ranges with Range GETs (ledger pages), null for a missing key", async () => {
    await put("builds/b1/events.jsonl", "abcdefghij");
    const r = s3Reader({ endpoint, bucket: "ballast", region: "us-east-1", ...CREDS });
    const ranges = must(r.read.ranges, "the S3 reader's ranges");
    const parts = await ranges("builds/b1/events.jsonl", [
      [0, 3],
      [5, 10],
      [2, 2],
    ]);
    expect(must(parts, "the ranges of events.jsonl").map((p) => Buffer.from(p).toString())).toEqual([
      "abc",
      "fghij",
      "",
    ]);
    expect(await ranges("builds/b1/missing.jsonl", [[0, 1]])).toBeNull();
  });

  it("reads under a key prefix (and not outside it)", async () => {
    await put("tenant-a/latest.json", '{"under":"prefix"}');
    await put("latest.json", '{"at":"root"}');
    const r = s3Reader({ endpoint, bucket: "ballast", region: "us-east-1", prefix: "tenant-a/", ...CREDS });
    expect(text(await r.read("latest.json"))).toBe('{"under":"prefix"}');
    expect(await r.read("builds/b1/site-data/a.json")).toBeNull();
    expect(r.describe("latest.json")).toBe("s3://ballast/tenant-a/latest.json");
    r.close();
  });

  it("throws StorageUnavailableError (HTTP 503) for a missing bucket, a refused connection and a store that never answers", async () => {
    const noBucket = s3Reader({ endpoint, bucket: "no-such-bucket", region: "us-east-1", ...CREDS });
    const err = await noBucket.read("latest.json").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageUnavailableError);
    expect((err as StorageUnavailableError).status).toBe(503);
    expect((err as StorageUnavailableError).reason).toMatch(/^HTTP 404 NoSuchBucket/);
    expect((err as StorageUnavailableError).headers["Retry-After"]).toBe("30");
    noBucket.close();

    // A port nothing listens on: the silent server's port after closing a throwaway listener.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
    const closedPort = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const refused = s3Reader({
      endpoint: `http://127.0.0.1:${closedPort}`,
      bucket: "ballast",
      region: "us-east-1",
      maxAttempts: 1,
      ...CREDS,
    });
    const e2 = await refused.read("latest.json").catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(StorageUnavailableError);
    expect((e2 as StorageUnavailableError).reason).toBe("ECONNREFUSED");
    refused.close();

    const port = (silent.address() as { port: number }).port;
    const hung = s3Reader({
      endpoint: `http://127.0.0.1:${port}`,
      bucket: "ballast",
      region: "us-east-1",
      requestTimeoutMs: 200,
      maxAttempts: 1,
      ...CREDS,
    });
    const t0 = Date.now();
    const e3 = await hung.read("latest.json").catch((e: unknown) => e);
    expect(e3).toBeInstanceOf(StorageUnavailableError);
    expect((e3 as StorageUnavailableError).reason).toMatch(/ETIMEDOUT|TimeoutError/);
    expect(Date.now() - t0).toBeLessThan(5000); // liveness bound: the 200 ms deadline ended it, not a hang
    hung.close();
  });
});

describe("PublishedStore over an object store", () => {
  const manifest = (buildId: string) =>
    JSON.stringify({
      schemaVersion: "1",
      buildId,
      asOf: 1757203200,
      generatedAt: 1757203200,
      clock: "replay",
      contentHash: "0".repeat(64),
      files: [
        {
          path: "site-data/a.json",
          sha256: "0".repeat(64),
          bytes: 8,
          rows: null,
          dataAsOf: null,
          schemaVersion: "1",
          artifact: "a",
          encodings: ["br", "gzip"],
        },
      ],
      sources: [],
      readerDropped: {},
      circuits: {},
      models: [],
      qualityRejections: {},
    });

  it("follows the pointer, reads compressed siblings, and keeps serving (with a recorded failure) when the store fails", async () => {
    await put("p2/builds/b1/manifest.json", manifest("b1"));
    await put("p2/builds/b1/site-data/a.json", '{"v":1}\n');
    await put("p2/builds/b1/site-data/a.json.gz", new Uint8Array([31, 139]));
    await put(
      "p2/latest.json",
      JSON.stringify({ buildId: "b1", asOf: 1757203200, manifest: "builds/b1/manifest.json" }),
    );
    const r = s3Reader({ endpoint, bucket: "ballast", region: "us-east-1", prefix: "p2/", ...CREDS });
    let fail = false;
    const store = new PublishedStore(
      (key) =>
        fail ? Promise.reject(new StorageUnavailableError(`s3://ballast/p2/${key}`, "ECONNREFUSED")) : r.read(key),
      0,
    );
    const b1 = await store.build();
    expect(b1?.id).toBe("b1");
    const build = must(b1, "the serving build");
    expect(text(await build.file("site-data/a.json"))).toBe('{"v":1}\n');
    expect([...must(await build.file("site-data/a.json", "gzip"), "a.json's gzip sibling")]).toEqual([31, 139]);
    expect(await build.file("site-data/a.json", "br")).toBeNull(); // listed encoding but no object: null, as on fs
    expect(store.storageFailure()).toBeNull();

    fail = true;
    expect((await store.build())?.id).toBe("b1");
    expect(store.storageFailure()).toMatchObject({ error: "s3://ballast/p2/latest.json: ECONNREFUSED" });
    fail = false;

    await put("p2/builds/b2/manifest.json", manifest("b2"));
    await put(
      "p2/latest.json",
      JSON.stringify({ buildId: "b2", asOf: 1757203200, manifest: "builds/b2/manifest.json" }),
    );
    expect((await store.build())?.id).toBe("b2");
    expect(store.storageFailure()).toBeNull();
    r.close();
  });

  it("maxRefreshWaitMs: a request waits at most that long for a re-check once a build serves", async () => {
    let hang = false;
    const pointer = Buffer.from(JSON.stringify({ buildId: "b1", asOf: 1757203200, manifest: "m.json" }));
    const store = new PublishedStore(
      async (key) => {
        if (hang) return new Promise<Uint8Array | null>(() => undefined);
        return key === "latest.json" ? pointer : Buffer.from(manifest("b1"));
      },
      0,
      Date.now,
      { maxRefreshWaitMs: 50 },
    );
    expect((await store.build())?.id).toBe("b1");
    hang = true;
    const t0 = Date.now();
    expect((await store.build())?.id).toBe("b1");
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});

describe("storage config (STORAGE_DRIVER and S3_* as in build/config.ts)", () => {
  it("rejects incomplete S3 settings with every problem named", () => {
    const res = parseApiConfig({ STORAGE_DRIVER: "s3", S3_ACCESS_KEY_ID: "id", S3_PREFIX: "/x" });
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.error).toContain("S3_BUCKET is required when STORAGE_DRIVER=s3");
    expect(res.error).toContain("S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together");
    expect(res.error).toContain("S3_PREFIX");
    expect(parseApiConfig({ STORAGE_DRIVER: "gcs" }).ok).toBe(false);
  });

  it("selects the S3 reader with STORAGE_DRIVER=s3 and the filesystem by default", async () => {
    const res = parseApiConfig({
      STORAGE_DRIVER: "s3",
      S3_ENDPOINT: endpoint,
      S3_BUCKET: "ballast",
      S3_ACCESS_KEY_ID: "S3RVER",
      S3_SECRET_ACCESS_KEY: "S3RVER",
    });
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.config).toMatchObject({
      S3_REGION: "us-east-1",
      S3_FORCE_PATH_STYLE: true,
      S3_PREFIX: "",
      POINTER_REFRESH_MS: 1000,
    });
    const s3 = await openStorageReader(res.config);
    expect(s3.driver).toBe("s3");
    expect(s3.location).toBe("s3://ballast/");
    expect(text(await s3.read("builds/b1/site-data/a.json"))).toBe('{"a":1}\n');
    s3.close();
    const fs = await openStorageReader({ BALLAST_DATA_DIR: dir });
    expect(fs.driver).toBe("fs");
  });
});

describe("health of a store that does not answer", () => {
  it("warns (no effect on status) with the object, the reason and for how long", async () => {
    const { assessHealth } = await import("../../api/health.ts");
    const now = 1_800_000_000;
    const { health } = assessHealth(null, now, "wall", {
      wallNow: now,
      storageFailure: { sinceMs: (now - 90) * 1000, error: "s3://ballast/latest.json: ECONNREFUSED" },
    });
    expect(health.warnings.find((w) => w.startsWith("published storage unreadable"))).toMatch(
      /^published storage unreadable \(no effect on status\): s3:\/\/ballast\/latest\.json: ECONNREFUSED for .+\. Nothing can be served until the store answers\.$/,
    );
    expect(
      assessHealth(null, now, "wall", { storageFailure: null }).health.warnings.some((w) =>
        w.startsWith("published storage"),
      ),
    ).toBe(false);
  });
});
