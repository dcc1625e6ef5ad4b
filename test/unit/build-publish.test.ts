import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
// @ts-expect-error s3rver ships no types
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../build/captures.ts";
import type { Db } from "../../build/duckdb.ts";
import { encodeBody } from "../../build/precompress.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import { S3Sink } from "../../build/sinks/s3.ts";
import type { PublishSink } from "../../build/sinks/sink.ts";
import { assembleManifest, type Emitter, emitBuild } from "../../build/stages/emit.ts";
import { applyRetention, buildsToKeep, publishBuild, sweepLeftovers } from "../../build/stages/publish.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { must } from "../helpers/must.ts";

process.env.BALLAST_LOG = "silent";
const AS_OF = Date.parse("2025-09-07T00:00:00Z") / 1000;

/** Emitters standing in for the real ones: JSON, CSV, a dated dataset and a DuckDB file whose bytes vary per run. */
function fakeEmitters(duckdbBytes: Uint8Array): Emitter[] {
  const extras = { artifact: "fake", rows: 1, dataAsOf: AS_OF, schemaVersion: "1.0.0" };
  return [
    {
      name: "site",
      emit: async () => ({
        files: [{ path: "site-data/a.json", body: `{"a":${"1".repeat(3000)}}\n`, extras }],
        datedCopies: [],
      }),
    },
    {
      name: "datasets",
      emit: async (ctx) => {
        const body = "id,v\nx,1\n";
        return {
          files: [{ path: `datasets/t/${ctx.asOfDay}.csv`, body, extras }],
          datedCopies: [{ key: `datasets/t/${ctx.asOfDay}.csv`, body }],
        };
      },
    },
    {
      name: "duckdb",
      emit: async () => ({
        files: [{ path: "ballast.duckdb", body: duckdbBytes, extras: { ...extras, rows: null }, unstable: true }],
        datedCopies: [],
      }),
    },
  ];
}

/** Emits and assembles a manifest over the fake emitters (no database needed). */
async function fakeBuild(duckdbBytes: Uint8Array, asOf = AS_OF) {
  const emitted = await emitBuild(
    {
      db: {} as Db,
      asOf,
      asOfDay: new Date(asOf * 1000).toISOString().slice(0, 10),
      sourceObservedAt: {},
      inputsSha256: "0".repeat(64),
    },
    fakeEmitters(duckdbBytes),
  );
  const manifest = assembleManifest(
    {
      asOf,
      captures: [],
      sources: [],
      readerDropped: {},
      readerProblems: {},
      skippedCaptures: [],
      sourceLineage: [],
      modelRun: { tables: [], rejected: {}, timings: {} },
      qualityRejections: {},
      warnings: [],
    },
    emitted,
    {},
  );
  return { emitted, manifest };
}

const walk = (d: string): string[] =>
  readdirSync(d, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
const snapshot = (d: string) => walk(d).map((f) => ({ f, mtimeMs: statSync(f).mtimeMs, sha: sha256(readFileSync(f)) }));

describe("emit + publish with fake emitters", () => {
  it("excludes unstable bytes and compressed siblings from the build id; lists encodings per file", async () => {
    const a = await fakeBuild(new Uint8Array([1, 2, 3]));
    const b = await fakeBuild(new Uint8Array([4, 5, 6, 7]));
    expect(a.emitted.buildId).toBe(b.emitted.buildId);
    expect(a.emitted.buildId).toMatch(/^20250907T0000Z-[0-9a-f]{7}$/);
    expect(a.manifest.files.map((f) => [f.path, f.encodings])).toEqual([
      ["ballast.duckdb", undefined],
      ["datasets/t/2025-09-07.csv", ["br", "gzip"]],
      ["site-data/a.json", ["br", "gzip"]],
    ]);
  });

  it("writes deterministic .br/.gz siblings that decode to the file (gzip header mtime 0)", async () => {
    const body = readFileSync(join(import.meta.dirname, "../../datasets/datasets.ts"));
    const [x, y] = [await encodeBody(body), await encodeBody(body)];
    expect(Buffer.compare(x.br, y.br)).toBe(0);
    expect(Buffer.compare(x.gzip, y.gzip)).toBe(0);
    expect(x.gzip.subarray(4, 8)).toEqual(Buffer.from([0, 0, 0, 0]));
    expect(brotliDecompressSync(x.br).equals(body)).toBe(true);
    expect(gunzipSync(x.gzip).equals(body)).toBe(true);
  });

  it("rebuilding the same as-of reuses the served folder: files byte-identical, mtimes unchanged, every sha256 matches", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ballast-republish-"));
    const sink = new FsSink(dir);
    const first = await fakeBuild(new Uint8Array([1, 2, 3]));
    const r1 = await publishBuild(sink, first.manifest, first.emitted);
    expect(r1.reused).toBe(false);
    const buildDir = join(dir, "builds", first.manifest.buildId);
    const before = snapshot(buildDir);
    expect(before.map((s) => s.f.slice(buildDir.length + 1))).toEqual([
      "ballast.duckdb",
      "datasets/t/2025-09-07.csv",
      "datasets/t/2025-09-07.csv.br",
      "datasets/t/2025-09-07.csv.gz",
      "manifest.json",
      "site-data/a.json",
      "site-data/a.json.br",
      "site-data/a.json.gz",
    ]);
    await new Promise((r) => setTimeout(r, 20));
    const second = await fakeBuild(new Uint8Array([9, 9, 9, 9, 9])); // DuckDB bytes differ run to run
    const r2 = await publishBuild(sink, second.manifest, second.emitted);
    expect(r2.reused).toBe(true);
    expect(r2.manifest).toEqual(first.manifest);
    expect(snapshot(buildDir)).toEqual(before);
    const manifest = JSON.parse(readFileSync(join(buildDir, "manifest.json"), "utf8")) as BuildManifest;
    for (const f of manifest.files) {
      const bytes = readFileSync(join(buildDir, f.path));
      expect(sha256(bytes), f.path).toBe(f.sha256);
      expect(bytes.byteLength).toBe(f.bytes);
      if (f.encodings) {
        expect(brotliDecompressSync(readFileSync(join(buildDir, `${f.path}.br`))).equals(bytes)).toBe(true);
        expect(gunzipSync(readFileSync(join(buildDir, `${f.path}.gz`))).equals(bytes)).toBe(true);
      }
    }
    expect(JSON.parse(readFileSync(join(dir, "latest.json"), "utf8"))).toEqual({
      buildId: manifest.buildId,
      asOf: AS_OF,
      manifest: `builds/${manifest.buildId}/manifest.json`,
    });
    expect(readdirSync(join(dir, "datasets/t")).sort()).toEqual([
      "2025-09-07.csv",
      "2025-09-07.csv.br",
      "2025-09-07.csv.gz",
    ]);
  });

  it("commits history before the pointer moves, and leaves the pointer alone when that fails", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ballast-order-"));
    const sink = new FsSink(dir);
    writeFileSync(join(dir, "latest.json"), "previous\n");
    const { emitted, manifest } = await fakeBuild(new Uint8Array([1]));
    await expect(
      publishBuild(sink, manifest, emitted, {
        beforePointer: async () => {
          throw new Error("warehouse locked");
        },
      }),
    ).rejects.toThrow("warehouse locked");
    expect(readFileSync(join(dir, "latest.json"), "utf8")).toBe("previous\n");
    let pointerAtCommit = "";
    await publishBuild(sink, manifest, emitted, {
      beforePointer: async () => {
        pointerAtCommit = readFileSync(join(dir, "latest.json"), "utf8");
      },
    });
    expect(pointerAtCommit).toBe("previous\n");
    expect(readFileSync(join(dir, "latest.json"), "utf8")).toContain(manifest.buildId);
  });

  it("refuses to serve a stored build with the same id but another content hash", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ballast-collision-"));
    const { emitted, manifest } = await fakeBuild(new Uint8Array([1]));
    mkdirSync(join(dir, "builds", manifest.buildId), { recursive: true });
    writeFileSync(
      join(dir, "builds", manifest.buildId, "manifest.json"),
      JSON.stringify({ ...manifest, contentHash: "f".repeat(64) }),
    );
    await expect(publishBuild(new FsSink(dir), manifest, emitted)).rejects.toThrow(
      /already exists with another content hash/,
    );
  });
});

describe("dated copies are write-once", () => {
  it("a stored dated copy with other bytes fails the publish before anything is written; same bytes are skipped", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ballast-write-once-"));
    const { emitted, manifest } = await fakeBuild(new Uint8Array([1]));
    const key = "datasets/t/2025-09-07.csv";
    mkdirSync(join(dir, "datasets/t"), { recursive: true });
    writeFileSync(join(dir, key), "id,v\nx,2\n");
    await expect(publishBuild(new FsSink(dir), manifest, emitted)).rejects.toThrow(
      `${key} is already published with other bytes`,
    );
    expect(walk(dir)).toEqual([join(dir, key)]);
    expect(readFileSync(join(dir, key), "utf8")).toBe("id,v\nx,2\n");
    // the same bytes as the build's: not written again (mtime kept), and its siblings are not added
    writeFileSync(join(dir, key), "id,v\nx,1\n");
    const before = statSync(join(dir, key)).mtimeMs;
    const r = await publishBuild(new FsSink(dir), manifest, emitted);
    expect(r.datedWritten).toEqual([]);
    expect(statSync(join(dir, key)).mtimeMs).toBe(before);
    // a fresh store: the copy and its siblings are written
    const fresh = mkdtempSync(join(tmpdir(), "ballast-write-once-"));
    expect((await publishBuild(new FsSink(fresh), manifest, emitted)).datedWritten).toEqual([key]);
    expect(gunzipSync(readFileSync(join(fresh, `${key}.gz`))).toString("utf8")).toBe("id,v\nx,1\n");
  });
});

describe("background emitters", () => {
  const extras = { artifact: "fake", rows: 1, dataAsOf: AS_OF, schemaVersion: "1.0.0" };
  const ctx = {
    db: {} as Db,
    asOf: AS_OF,
    asOfDay: "2025-09-07",
    sourceObservedAt: {},
    inputsSha256: "0".repeat(64),
  };
  const file = (path: string) => ({ path, body: `{"p":"${path}"}\n`, extras });

  it("runs beside the emitters after it, sees only the files before it, and its files join the build", async () => {
    const order: string[] = [];
    let seen: string[] = [];
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const emitted = await emitBuild(ctx, [
      { name: "first", emit: async () => ({ files: [file("a.json")], datedCopies: [] }) },
      {
        name: "bg",
        background: true,
        emit: async (c) => {
          seen = [...c.emitted.keys()];
          await held; // finishes only after the emitter after it has run
          order.push("bg");
          return { files: [file("og/x.json")], datedCopies: [] };
        },
      },
      {
        name: "later",
        emit: async () => {
          order.push("later");
          release();
          return { files: [file("z.json")], datedCopies: [] };
        },
      },
    ]);
    expect(seen).toEqual(["a.json"]);
    expect(order).toEqual(["later", "bg"]);
    expect(emitted.files.map((f) => f.file.path)).toEqual(["a.json", "og/x.json", "z.json"]);
  });

  it("a failing emitter fails the build once the background one has settled; a failing background one fails it too", async () => {
    let settled = false;
    const slowBackground: Emitter = {
      name: "bg",
      background: true,
      emit: async () => {
        await new Promise((r) => setTimeout(r, 50));
        settled = true;
        return { files: [], datedCopies: [] };
      },
    };
    const failing: Emitter = {
      name: "bad",
      emit: async () => {
        throw new Error("emitter bad failed");
      },
    };
    await expect(emitBuild(ctx, [slowBackground, failing])).rejects.toThrow("emitter bad failed");
    expect(settled).toBe(true);
    const failingBackground: Emitter = { ...failing, name: "bad-bg", background: true };
    await expect(emitBuild(ctx, [failingBackground, { ...slowBackground, background: undefined }])).rejects.toThrow(
      "emitter bad failed",
    );
  });
});

describe("retention rule", () => {
  const b = (buildId: string, iso: string, generatedAt?: number) => ({
    buildId,
    asOf: Date.parse(iso) / 1000,
    generatedAt: generatedAt ?? Date.parse(iso) / 1000,
  });
  it("keeps the N newest, the serving build and the newest build of each as-of day in the 90-day window", () => {
    const builds = [
      b("d1-early", "2025-09-01T06:00:00Z"),
      b("d1-late", "2025-09-01T18:00:00Z"),
      b("d2-a", "2025-09-02T00:00:00Z", 1),
      b("d2-b", "2025-09-02T00:00:00Z", 2),
      b("d3", "2025-09-03T00:00:00Z"),
      b("d4", "2025-09-04T00:00:00Z"),
      b("old-in-window", "2025-06-06T00:00:00Z"),
      b("old-out", "2025-06-05T23:00:00Z"),
      b("older-out", "2024-01-01T00:00:00Z"),
    ];
    expect([...buildsToKeep(builds, "older-out", 2)].sort()).toEqual([
      "d1-late",
      "d2-b",
      "d3",
      "d4",
      "old-in-window",
      "older-out",
    ]);
  });
});

/** Publishes a fake complete build folder (manifest with asOf/generatedAt) plus one file with siblings. */
async function completeBuild(sink: PublishSink, id: string, asOf: number): Promise<void> {
  for (const k of ["site-data/a.json", "site-data/a.json.br", "site-data/a.json.gz"])
    await sink.put(`builds/${id}/${k}`, "x");
  await sink.put(`builds/${id}/manifest.json`, JSON.stringify({ buildId: id, asOf, generatedAt: asOf, files: [] }));
}

let s3:
  | { server: { run(): Promise<{ port: number }>; close(): Promise<void> }; dir: string; endpoint: string }
  | undefined;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "ballast-s3-publish-"));
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: dir });
  const { port } = await server.run();
  s3 = { server, dir, endpoint: `http://127.0.0.1:${port}` };
});
afterAll(async () => {
  await s3?.server.close();
  if (s3) rmSync(s3.dir, { recursive: true, force: true });
});

let bucketSeq = 0;
const SINKS: [string, () => Promise<{ sink: PublishSink; root: string | null }>][] = [
  [
    "fs",
    async () => {
      const root = mkdtempSync(join(tmpdir(), "ballast-retention-"));
      return { sink: new FsSink(root), root };
    },
  ],
  [
    "s3",
    async () => {
      const Bucket = `retention-${++bucketSeq}`;
      const client = new S3Client({
        endpoint: must(s3, "the S3 server").endpoint,
        region: "us-east-1",
        forcePathStyle: true,
        credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
      });
      await client.send(new CreateBucketCommand({ Bucket }));
      return {
        sink: new S3Sink({
          endpoint: must(s3, "the S3 server").endpoint,
          bucket: Bucket,
          region: "us-east-1",
          accessKeyId: "S3RVER",
          secretAccessKey: "S3RVER",
        }),
        root: null,
      };
    },
  ],
];

describe.each(SINKS)("sweep and retention on the %s sink", (_name, makeSink) => {
  it("sweeps partial builds and abandoned temp files, then prunes old builds and dated files with their siblings", async () => {
    const { sink, root } = await makeSink();
    const t = (iso: string) => Date.parse(iso) / 1000;
    // Complete builds: 3 on the newest days, 2 on one day, one just inside and two outside the 90-day window.
    await completeBuild(sink, "20250907T0000Z-aaaaaaa", t("2025-09-07T00:00:00Z"));
    await completeBuild(sink, "20250906T1200Z-bbbbbbb", t("2025-09-06T12:00:00Z"));
    await completeBuild(sink, "20250906T0000Z-ccccccc", t("2025-09-06T00:00:00Z"));
    await completeBuild(sink, "20250905T0000Z-ddddddd", t("2025-09-05T00:00:00Z"));
    await completeBuild(sink, "20250610T0000Z-eeeeeee", t("2025-06-10T00:00:00Z"));
    await completeBuild(sink, "20250101T0000Z-fffffff", t("2025-01-01T00:00:00Z"));
    await completeBuild(sink, "20240101T0000Z-0000000", t("2024-01-01T00:00:00Z"));
    // Partial builds (killed before their manifest), one of them named by the pointer (kept, defensively).
    // (each with an object right under the build folder: s3rver reports a common prefix only for those; S3 itself does not need it)
    await sink.put("builds/20250908T0000Z-partial/site-data/a.json", "half");
    await sink.put("builds/20250908T0000Z-partial/ballast.duckdb", "half");
    await sink.put("builds/20250908T0000Z-partia2/ballast.duckdb", "half");
    await sink.put("builds/20250101T0000Z-pointed/ballast.duckdb", "x");
    await sink.put(
      "latest.json",
      JSON.stringify({
        buildId: "20250101T0000Z-pointed",
        asOf: t("2025-01-01T00:00:00Z"),
        manifest: "builds/20250101T0000Z-pointed/manifest.json",
      }),
    );
    // Dated dataset files with their siblings: inside and outside the window.
    for (const day of ["2025-09-07", "2025-06-09", "2025-06-08", "2024-01-01"]) {
      for (const suffix of ["", ".br", ".gz"]) await sink.put(`datasets/top-stablecoins/${day}.csv${suffix}`, "x");
    }
    await sink.put("datasets/contracts.csv", "x");
    let liveTemp = "";
    if (root) {
      const deadPid = spawnSync(process.execPath, ["-e", ""]).pid; // exited: its temp files are abandoned
      writeFileSync(join(root, `latest.json.${deadPid}.k3j2.tmp`), "x");
      writeFileSync(join(root, `datasets/contracts.csv.${deadPid}.abc.tmp`), "x");
      mkdirSync(join(root, "raw/defillama/2025-09-07"), { recursive: true });
      writeFileSync(join(root, `raw/defillama/2025-09-07/x.json.gz.${deadPid}.r.tmp`), "x");
      liveTemp = `raw/x.json.${process.pid}.live.tmp`; // a writer still running (e.g. a capture): left alone
      writeFileSync(join(root, liveTemp), "x");
    }

    const swept = await sweepLeftovers(sink);
    expect(swept.partialBuilds).toEqual(["20250908T0000Z-partia2", "20250908T0000Z-partial"]);
    expect(swept.abandonedFiles.map((k) => k.replace(/\.\d+\.(\w+)\.tmp$/, ".<pid>.$1.tmp"))).toEqual(
      root
        ? [
            "datasets/contracts.csv.<pid>.abc.tmp",
            "latest.json.<pid>.k3j2.tmp",
            "raw/defillama/2025-09-07/x.json.gz.<pid>.r.tmp",
          ]
        : [],
    );
    expect(await sink.listDirs("builds/")).not.toContain("20250908T0000Z-partial");
    expect(await sink.listDirs("builds/")).toContain("20250101T0000Z-pointed");
    if (root) expect(await sink.listAbandoned()).toEqual([]);

    // The pointer now names the newest build (as after a publish).
    await sink.put(
      "latest.json",
      JSON.stringify({
        buildId: "20250907T0000Z-aaaaaaa",
        asOf: t("2025-09-07T00:00:00Z"),
        manifest: "builds/20250907T0000Z-aaaaaaa/manifest.json",
      }),
    );
    const report = await applyRetention(sink, { keepBuilds: 2 });
    expect(report.keptBuilds).toEqual([
      "20250907T0000Z-aaaaaaa",
      "20250906T1200Z-bbbbbbb",
      "20250905T0000Z-ddddddd",
      "20250610T0000Z-eeeeeee",
    ]);
    expect(report.deletedBuilds).toEqual([
      "20250906T0000Z-ccccccc",
      "20250101T0000Z-fffffff",
      "20240101T0000Z-0000000",
    ]);
    expect(await sink.listDirs("builds/")).toEqual([
      "20250101T0000Z-pointed",
      "20250610T0000Z-eeeeeee",
      "20250905T0000Z-ddddddd",
      "20250906T1200Z-bbbbbbb",
      "20250907T0000Z-aaaaaaa",
    ]);
    expect(await sink.list("builds/20250906T0000Z-ccccccc/")).toEqual([]);
    expect(await sink.list("datasets/")).toEqual([
      "datasets/contracts.csv",
      "datasets/top-stablecoins/2025-06-09.csv",
      "datasets/top-stablecoins/2025-06-09.csv.br",
      "datasets/top-stablecoins/2025-06-09.csv.gz",
      "datasets/top-stablecoins/2025-09-07.csv",
      "datasets/top-stablecoins/2025-09-07.csv.br",
      "datasets/top-stablecoins/2025-09-07.csv.gz",
    ]);
    expect(report.deletedDatedFiles).toHaveLength(6);
    if (root)
      expect(readdirSync(join(root, "raw"), { recursive: true }).sort()).toEqual([
        "defillama",
        "defillama/2025-09-07",
        liveTemp.slice(4),
      ]);
  });
});

describe("folder deletes are guarded", () => {
  it("refuses prefixes that are not a folder", async () => {
    const sink = new FsSink(mkdtempSync(join(tmpdir(), "ballast-guard-")));
    for (const p of ["", "/", "builds", "../x/", "builds//"])
      await expect(sink.deletePrefix(p)).rejects.toThrow(/not a folder prefix/);
  });
});
