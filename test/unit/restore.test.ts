import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import type { KeyStore } from "../../api/lib/key-store.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { sha256 } from "../../build/captures.ts";
import { MemorySink, memoryEffects } from "../../build/memory-effects.ts";
import { restoreBuild } from "../../build/restore.ts";
import { type BuildResult, runBuild } from "../../build/run-build.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import { DATASET_FORMATS } from "../../datasets/contract.ts";
import { DATASETS } from "../../datasets/datasets.ts";
import type { Registry } from "../../pipelines/registry/schema.ts";
import type { Capture } from "../../pipelines/sources/types.ts";
import { must } from "../helpers/must.ts";
import { publishFakeBuild } from "../helpers/ops.ts";
import { registryCoin } from "../helpers/registry-coin.ts";

// `build/cli.ts restore --build ID`: a stored, complete build serves again; an incomplete or altered one never does.
const dir = mkdtempSync(join(tmpdir(), "ballast-restore-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pointer = () =>
  JSON.parse(readFileSync(join(dir, "latest.json"), "utf8")) as { buildId: string; manifest: string };

describe("restoreBuild", () => {
  it("moves latest.json back to a stored build after checking every file against its manifest", async () => {
    publishFakeBuild(dir, "old-build", [], { "site-data/extra.json": { a: 1 } });
    publishFakeBuild(dir, "new-build", []);
    expect(pointer().buildId).toBe("new-build");
    const r = await restoreBuild(new FsSink(dir), "old-build");
    expect(r).toMatchObject({ buildId: "old-build", previousBuildId: "new-build", filesChecked: 2 });
    expect(pointer()).toMatchObject({ buildId: "old-build", manifest: "builds/old-build/manifest.json" });
  });

  it("refuses an unknown, incomplete or altered build and leaves the pointer alone", async () => {
    const sink = new FsSink(dir);
    await expect(restoreBuild(sink, "nope")).rejects.toThrow(/build nope: no manifest/);
    writeFileSync(join(dir, "builds/new-build/site-data/stablecoins.json"), '{"peggedAssets":[{}]}');
    await expect(restoreBuild(sink, "new-build")).rejects.toThrow(
      /site-data\/stablecoins.json does not match its manifest sha256/,
    );
    rmSync(join(dir, "builds/new-build/site-data/stablecoins.json"));
    await expect(restoreBuild(sink, "new-build")).rejects.toThrow(/site-data\/stablecoins.json is missing/);
    expect(pointer().buildId).toBe("old-build");
  });

  // Issue 30 item 3: a corrupt latest.json is the case restore exists for; it must not need to parse it.
  it("restores over a corrupt latest.json (function and `build/cli.ts restore --build`)", async () => {
    publishFakeBuild(dir, "good-build", []);
    writeFileSync(join(dir, "latest.json"), '{"buildId": "good-bu');
    const r = await restoreBuild(new FsSink(dir), "good-build");
    expect(r).toMatchObject({ buildId: "good-build", previousBuildId: null, previousPointerUnreadable: true });
    expect(pointer().buildId).toBe("good-build");
    writeFileSync(join(dir, "latest.json"), "\u0000garbage");
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "build/cli.ts", "restore", "--build", "old-build"],
      { env: { ...process.env, BALLAST_DATA_DIR: dir, BALLAST_LOG: "silent" } },
    );
    expect(stdout).toMatch(/^serving old-build .* was unreadable \(latest.json was corrupt\)/);
    expect(pointer().buildId).toBe("old-build");
  });
});

// Issue 30 item 3: a corrupt pointer is reported by health at the next look (local storage too), not after a restart.
describe("a corrupt latest.json in health", () => {
  it("warns `published pointer unreadable` at once while the build in memory keeps serving, and clears after a restore", async () => {
    const own = mkdtempSync(join(tmpdir(), "ballast-pointer-"));
    try {
      publishFakeBuild(own, "served-build", []);
      const app = createApp({
        store: new PublishedStore(fsReader(own), 0),
        keys: null as unknown as KeyStore, // health needs no key
        limiter: new KeyRateLimiter(),
        corsOrigins: [],
        clockMode: "wall",
      });
      const warnings = async () =>
        ((await (await app.request("/api/health")).json()) as { warnings: string[] }).warnings;
      const unreadable = (ws: string[]) => ws.filter((w) => w.startsWith("published pointer unreadable"));
      expect(unreadable(await warnings())).toEqual([]);
      writeFileSync(join(own, "latest.json"), '{"buildId": "served-bu');
      const ws = unreadable(await warnings());
      expect(ws).toHaveLength(1);
      expect(ws[0]).toMatch(/latest\.json is unreadable .*Build served-build keeps serving/);
      await restoreBuild(new FsSink(own), "served-build");
      expect(unreadable(await warnings())).toEqual([]);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
});

// Issue 29 part 1: dated files are write-once. Builds of one UTC day (00:00Z, 12:00Z, a rebuild, an
// 18:00Z run as trigger-digest or the scheduler starts it), then restores, on one in-memory store served
// by the real API: no dated object ever changes bytes once stored, and every datapackage.json the API
// serves describes (sha256, bytes) the bytes the API serves at each of its resource paths.
describe("write-once dated files across builds of one day and restores", () => {
  const DAY = "2025-09-07";
  const at = (hhmm: string) => Date.parse(`${DAY}T${hhmm}:00Z`) / 1000;
  const REGISTRY: Registry = {
    eventFamilies: {},
    bridges: [],
    chains: [{ id: "ethereum", name: "Ethereum" }],
    coins: [registryCoin("aaa-one", "1", "peggedUSD", "USD", { geckoId: "aaa-coin" })],
  };
  const list = {
    peggedAssets: [
      {
        id: "1",
        name: "AAA",
        symbol: "AAA",
        gecko_id: "aaa-coin",
        pegType: "peggedUSD",
        pegMechanism: "fiat-backed",
        price: 1,
        circulating: { peggedUSD: 1_000_000 },
        circulatingPrevDay: { peggedUSD: 900_000 },
        circulatingPrevWeek: { peggedUSD: 900_000 },
        circulatingPrevMonth: { peggedUSD: 900_000 },
        chainCirculating: {
          Ethereum: { current: { peggedUSD: 1_000_000 }, circulatingPrevDay: { peggedUSD: 900_000 } },
        },
      },
    ],
  };
  const CAPTURES: Capture[] = [
    {
      endpoint: "defillama.stablecoins",
      params: {},
      observedAt: at("00:00"),
      origin: "recorded",
      path: "fixture/stablecoins.json",
      sha256: sha256(JSON.stringify(list)),
      payload: list,
    },
  ];
  const sink = new MemorySink();
  const app = createApp({
    store: new PublishedStore(async (key) => sink.get(key), 0),
    keys: null as unknown as KeyStore, // static routes need no key
    limiter: new KeyRateLimiter(),
    corsOrigins: [],
    clockMode: "auto",
  });
  const fetchBytes = async (path: string) => {
    const res = await app.request(path);
    return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) };
  };
  const build = async (hhmm: string) => {
    const fx = memoryEffects({ captures: CAPTURES, sink });
    try {
      return await runBuild({ asOf: at(hhmm), registry: REGISTRY }, fx);
    } finally {
      fx.dispose();
    }
  };
  /** Every dated object outside build folders (dataset day files and siblings, snapshots, digests) → sha256. */
  const datedObjects = () =>
    new Map(
      [...sink.tree()]
        .filter(([k]) => /^(datasets\/[^/]+\/\d{4}-\d{2}-\d{2}\.|digests\/\d|snapshots\/\d)/.test(k))
        .map(([k, v]) => [k, sha256(v)]),
    );
  const seen = new Map<string, string>();
  /** No dated object seen so far changed bytes or disappeared; records the new ones. */
  const expectNoDatedRewrite = (step: string) => {
    const now = datedObjects();
    for (const [k, h] of seen) expect(now.get(k), `${step}: ${k}`).toBe(h);
    for (const [k, h] of now) seen.set(k, h);
  };
  const datedTopics = DATASETS.filter((d) => d.dated).map((d) => d.topic);
  /** Every served datapackage's resources, fetched at their paths through the API: [topic, path, stated, served]. */
  const servedDescriptors = async () => {
    const out: { topic: string; path: string; stated: string; served: string; bytes: number; size: number }[] = [];
    for (const topic of datedTopics) {
      const pkg = await fetchBytes(`/datasets/${topic}/datapackage.json`);
      expect(pkg.status, `${topic} datapackage`).toBe(200);
      const d = JSON.parse(Buffer.from(pkg.bytes).toString("utf8")) as {
        resources: { path: string; hash: string; bytes: number }[];
      };
      for (const r of d.resources) {
        const file = await fetchBytes(`/datasets/${topic}/${r.path}`);
        expect(file.status, `${topic}/${r.path}`).toBe(200);
        out.push({
          topic,
          path: r.path,
          stated: r.hash,
          served: `sha256:${sha256(file.bytes)}`,
          bytes: r.bytes,
          size: file.bytes.byteLength,
        });
      }
    }
    return out;
  };
  const expectDescriptorsMatch = async (step: string) => {
    const rows = await servedDescriptors();
    expect(rows).toHaveLength(datedTopics.length * DATASET_FORMATS.length);
    for (const r of rows) {
      expect(r.served, `${step}: ${r.topic}/${r.path} hash`).toBe(r.stated);
      expect(r.size, `${step}: ${r.topic}/${r.path} bytes`).toBe(r.bytes);
    }
    return rows;
  };
  /** The provenance line of a served CSV (it names the as-of of the build that wrote it). */
  const csvAsOf = async (path: string) =>
    /as-of (\S+)/.exec(Buffer.from((await fetchBytes(path)).bytes).toString("utf8"))?.[1];
  let first: BuildResult;
  let second: BuildResult;

  beforeAll(async () => {
    process.env.BALLAST_LOG = "silent";
    first = await build("00:00");
    expectNoDatedRewrite("build 00:00Z");
    second = await build("12:00");
  });

  it("the first build of the day owns its dated files; a later one moves only latest.* and describes its own files", async () => {
    expectNoDatedRewrite("build 12:00Z");
    expect(first.manifest.buildId).not.toBe(second.manifest.buildId);
    expect(seen.size).toBeGreaterThan(0);
    for (const topic of datedTopics) {
      expect(await csvAsOf(`/datasets/${topic}/${DAY}.csv`)).toBe(`${DAY}T00:00:00Z`);
      expect(await csvAsOf(`/datasets/${topic}/latest.csv`)).toBe(`${DAY}T12:00:00Z`);
      // the 12:00Z build's day files stay stored under its own build folder
      const own = await sink.get(`builds/${second.manifest.buildId}/datasets/${topic}/${DAY}.csv`);
      expect(Buffer.from(own ?? "").toString("utf8")).toContain(`as-of ${DAY}T12:00:00Z`);
    }
    const rows = await expectDescriptorsMatch("build 12:00Z");
    expect(new Set(rows.map((r) => r.path))).toEqual(new Set(DATASET_FORMATS.map((f) => `latest.${f}`)));
  });

  it("a rebuild, an 18:00Z build (trigger-digest, scheduler) and restores rewrite no dated file, and every descriptor matches its files", async () => {
    const again = await build("12:00");
    expect(again.reused).toBe(true);
    expectNoDatedRewrite("rebuild 12:00Z");
    await expectDescriptorsMatch("rebuild 12:00Z");
    const third = await build("18:00");
    expectNoDatedRewrite("build 18:00Z");
    await expectDescriptorsMatch("build 18:00Z");
    expect(await csvAsOf(`/datasets/top-stablecoins/latest.csv`)).toBe(`${DAY}T18:00:00Z`);

    const restored = await restoreBuild(sink, first.manifest.buildId);
    expect(restored.datedChecked).toBe(datedTopics.length * DATASET_FORMATS.length);
    expect(restored.datedRepublished).toEqual([]);
    expectNoDatedRewrite("restore 00:00Z");
    const rows = await expectDescriptorsMatch("restore 00:00Z");
    expect(new Set(rows.map((r) => r.path))).toEqual(new Set(DATASET_FORMATS.map((f) => `${DAY}.${f}`)));
    expect(await csvAsOf(`/datasets/top-stablecoins/latest.csv`)).toBe(`${DAY}T00:00:00Z`);

    await restoreBuild(sink, second.manifest.buildId);
    expectNoDatedRewrite("restore 12:00Z");
    await expectDescriptorsMatch("restore 12:00Z");
    await restoreBuild(sink, third.manifest.buildId);
    expectNoDatedRewrite("restore 18:00Z");
    await expectDescriptorsMatch("restore 18:00Z");
  });

  it("restore writes back a pruned dated file from the build folder, and refuses one stored with other bytes", async () => {
    const key = `datasets/top-stablecoins/${DAY}.csv`;
    const original = must(await sink.get(key), key);
    await sink.delete(key);
    const r = await restoreBuild(sink, first.manifest.buildId);
    expect(r.datedRepublished).toEqual([key]);
    expect(sha256(must(await sink.get(key), key))).toBe(sha256(original));
    expectNoDatedRewrite("restore after a prune");
    await restoreBuild(sink, second.manifest.buildId);
    await sink.put(key, "tampered\n");
    await expect(restoreBuild(sink, first.manifest.buildId)).rejects.toThrow(
      `${key} is stored with other bytes than its datapackage.json states`,
    );
    const serving = JSON.parse(Buffer.from(must(await sink.get("latest.json"), "latest.json")).toString("utf8"));
    expect(serving.buildId).toBe(second.manifest.buildId);
    await sink.put(key, original);
  });
});
