import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
// @ts-expect-error s3rver ships no types
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { S3Sink } from "../../build/sinks/s3.ts";
import { must } from "../helpers/must.ts";

let server: { run(): Promise<{ port: number }>; close(): Promise<void> };
let dir: string;
let endpoint: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ballast-s3-"));
  server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: dir });
  const { port } = await server.run();
  endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
  });
  await client.send(new CreateBucketCommand({ Bucket: "ballast" }));
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("S3 sink against s3rver on loopback", () => {
  it("puts, gets, lists and deletes objects", async () => {
    const sink = new S3Sink({
      endpoint,
      bucket: "ballast",
      region: "us-east-1",
      accessKeyId: "S3RVER",
      secretAccessKey: "S3RVER",
    });
    await sink.put("builds/b1/site-data/a.json", '{"a":1}\n');
    await sink.put("builds/b1/site-data/b.json", new Uint8Array([1, 2, 3]));
    await sink.put("latest.json", "{}");
    expect(Buffer.from(must(await sink.get("builds/b1/site-data/a.json"), "a.json")).toString()).toBe('{"a":1}\n');
    expect(await sink.get("nope.json")).toBeNull();
    expect(await sink.list("builds/")).toEqual(["builds/b1/site-data/a.json", "builds/b1/site-data/b.json"]);
    await sink.delete("builds/b1/site-data/b.json");
    expect(await sink.list("builds/")).toEqual(["builds/b1/site-data/a.json"]);
  });
});
