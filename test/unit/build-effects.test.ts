import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  watch,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../build/captures.ts";
import { REPO_ROOT } from "../../build/config.ts";
import { type MemoryBuildEffects, memoryEffects } from "../../build/memory-effects.ts";
import { type BuildResult, runBuild } from "../../build/run-build.ts";
import {
  AS_OF,
  BUILD_ID,
  CAPTURES,
  describeTree,
  EUR_USD,
  type Entry,
  EXPECTED,
  NOW_MS,
  normalise,
  REGISTRY,
} from "../helpers/build-effects-tree.ts";
import { must } from "../helpers/must.ts";

// A small build through the in-memory effects (build/memory-effects.ts), its inputs and comparable form
// in test/helpers/build-effects-tree.ts. Its whole output tree is compared with the committed expected
// tree under test/fixtures/build-effects/expected/ (Observable Framework's build test is the model).
// Regenerate after an intended output change (a new artifact too) with one command, then read the diff:
//   npx tsx scripts/write-build-effects.ts
// The hand checks at the end recompute a few values from the inputs of that module.

/** Every file under `dir` (relative path → mtime ms and size), or null when `dir` does not exist. */
function listing(dir: string, skip: readonly string[] = []): Record<string, string> | null {
  if (!existsSync(dir)) return null;
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (skip.includes(relative(dir, p))) continue;
      if (e.isDirectory()) walk(p);
      else {
        const s = statSync(p);
        out[relative(dir, p)] = `${s.mtimeMs}:${s.size}`;
      }
    }
  };
  walk(dir);
  return out;
}

const json = (fx: MemoryBuildEffects, key: string) =>
  JSON.parse(Buffer.from(must(fx.sink.tree().get(key), key)).toString("utf8"));

let first: MemoryBuildEffects, second: MemoryBuildEffects;
let r1: BuildResult, r2: BuildResult;
const seconds: number[] = [];
let cwdBefore: string[], cwdAfter: string[];
let dataBefore: Record<string, string> | null, dataAfter: Record<string, string> | null;
const scratchSeen: string[] = [];

beforeAll(async () => {
  // The builds run in an empty working dir of their own, so a file another test file (running
  // beside this one) writes into the checkout cannot pass for one of theirs.
  const cwd = process.cwd();
  const ownCwd = mkdtempSync(join(tmpdir(), "ballast-effects-cwd-"));
  process.chdir(ownCwd);
  cwdBefore = readdirSync(ownCwd).sort();
  dataBefore = listing(join(REPO_ROOT, "data"));
  first = memoryEffects({ captures: CAPTURES, nowMs: NOW_MS });
  second = memoryEffects({ captures: CAPTURES, nowMs: NOW_MS });
  const watcher = watch(first.scratchDir, (_event, name) => {
    if (name) scratchSeen.push(String(name));
  });
  try {
    let t = performance.now();
    r1 = await runBuild({ asOf: AS_OF, registry: REGISTRY }, first);
    seconds.push((performance.now() - t) / 1000);
    t = performance.now();
    r2 = await runBuild({ asOf: AS_OF, registry: REGISTRY }, second);
    seconds.push((performance.now() - t) / 1000);
  } finally {
    watcher.close();
    process.chdir(cwd);
  }
  cwdAfter = readdirSync(ownCwd).sort();
  rmSync(ownCwd, { recursive: true, force: true });
  dataAfter = listing(join(REPO_ROOT, "data"));
  process.stdout.write(
    `build-effects: two in-memory builds took ${seconds.map((s) => s.toFixed(1)).join(" s and ")} s\n`,
  );
});

afterAll(() => {
  first?.dispose();
  second?.dispose();
});

describe("a build through the in-memory effects", () => {
  it("publishes the expected tree: every key, JSON parsed and normalised, CSV/NDJSON as text, binaries by sha256", () => {
    const actual = describeTree(first.sink.tree(), r1.manifest.buildId, (holds, what) =>
      expect(holds, what).toBe(true),
    );
    const expectedEntries = JSON.parse(readFileSync(join(EXPECTED, "tree.json"), "utf8")) as Record<string, Entry>;
    expect(Object.keys(actual.entries)).toEqual(Object.keys(expectedEntries));
    expect(actual.entries).toEqual(expectedEntries);
    for (const [key, content] of actual.contents) {
      const text = readFileSync(join(EXPECTED, "files", key), "utf8");
      expect(content, key).toEqual(typeof content === "string" ? text : JSON.parse(text));
    }
  });

  it("is reproducible: a second run with the same clock gives the same bytes for every key but ballast.duckdb", () => {
    const a = first.sink.tree(),
      b = second.sink.tree();
    expect([...b.keys()]).toEqual([...a.keys()]);
    expect(r2.manifest.buildId).toBe(r1.manifest.buildId);
    expect(r2.runKey).toBe(r1.runKey);
    // ballast.duckdb bytes (and so its manifest entry in manifest.json and the run record) are the only volatile part
    const id = r1.manifest.buildId;
    const manifests = new Set([`builds/${id}/manifest.json`, r1.runKey]);
    for (const [key, bytes] of a) {
      if (key.endsWith("/ballast.duckdb")) continue;
      if (key === "snapshots/index.json") continue; // its rows hash the DuckDB file: compared normalised below
      if (manifests.has(key))
        expect(
          normalise(JSON.parse(Buffer.from(must(b.get(key), `${key} of the second build`)).toString()), id),
          key,
        ).toEqual(normalise(JSON.parse(Buffer.from(bytes).toString()), id));
      else expect(Buffer.compare(bytes, must(b.get(key), `${key} of the second build`)), key).toBe(0);
    }
    expect(describeTree(b, id)).toEqual(describeTree(a, id));
  });

  it("stamps the run with the injected clock, not the wall clock", () => {
    expect(r1.runKey).toBe(`runs/20250907T000500123Z-${r1.manifest.buildId}.json`);
    const run = json(first, r1.runKey);
    expect(run).toMatchObject({
      status: "published",
      asOf: AS_OF,
      startedAt: Math.floor(NOW_MS / 1000),
      finishedAt: Math.floor(NOW_MS / 1000),
      error: null,
    });
    expect(r1.ms).toBe(0); // the fixed clock does not move
    expect(r1.manifestLocation).toBe(`memory://builds/${r1.manifest.buildId}/manifest.json`);
  });

  it("sends the stage logs to the injected logger", () => {
    const lines = first.logs.map((l) => `${l.level} ${l.stage} ${l.msg}`);
    expect(lines).toContain("info load captures selected");
    expect(lines).toContain("info model models built");
    expect(lines.some((l) => /^info emit OG images: rendered \d+, cached 0 in \d+ ms$/.test(l))).toBe(true);
    expect(lines).toContain("info publish build published");
    expect(
      must(
        first.logs.find((l) => l.msg === "captures selected"),
        "the captures selected log",
      ).extra,
    ).toEqual({
      count: 2,
      parsedBefore: 0, // memoryEffects keep no parsed-capture cache
    });
    // memoryEffects keep no OG image cache either: every published image was rendered
    const pngs = first.sink.keys().filter((k) => k.startsWith(`builds/${r1.manifest.buildId}/og/`));
    expect(pngs.length).toBeGreaterThan(0);
    expect(
      must(
        first.logs.find((l) => l.msg.startsWith("OG images:")),
        "the OG images log",
      ).extra,
    ).toEqual({ rendered: pngs.length, cached: 0, skipped: expect.any(Number) });
    expect(
      must(
        first.logs.find((l) => l.msg === "build published"),
        "the build published log",
      ).extra,
    ).toMatchObject({
      buildId: r1.manifest.buildId,
      reused: false,
      runKey: r1.runKey,
    });
    expect(first.logs.filter((l) => l.level !== "info")).toEqual([]);
  });

  it("writes nothing to the cwd or the real data dir; its scratch folder is used and removed", () => {
    expect(cwdAfter).toEqual(cwdBefore); // no `.tmp/` spill folder, no stray file
    expect(dataAfter).toEqual(dataBefore);
    expect(scratchSeen.some((n) => n.startsWith("ballast-build-"))).toBe(true);
    expect(readdirSync(first.scratchDir)).toEqual([]);
    expect(readdirSync(second.scratchDir)).toEqual([]);
  });
});

describe("a failed build through the in-memory effects", () => {
  it("publishes nothing, records the failed run on the fixed clock and leaves the scratch folder empty", async () => {
    const fx = memoryEffects({ captures: [], nowMs: NOW_MS });
    try {
      await expect(runBuild({ asOf: AS_OF, registry: REGISTRY }, fx)).rejects.toThrow(
        /no capture observed at or before as-of .* nothing to build/,
      );
      expect(fx.sink.keys()).toEqual(["runs/20250907T000500123Z-failed.json"]);
      expect(
        JSON.parse(
          Buffer.from(
            must(fx.sink.tree().get("runs/20250907T000500123Z-failed.json"), "the failed run record"),
          ).toString(),
        ),
      ).toMatchObject({ status: "failed", buildId: null, manifest: null });
      expect(readdirSync(fx.scratchDir)).toEqual([]);
    } finally {
      fx.dispose();
    }
  });
});

// Issue 30 item 2: a build killed mid-run cannot remove its scratch folder; the next run does.
describe("scratch of a killed build", () => {
  it("the next build removes the folder of a dead pid, never a live process's", async () => {
    const fx = memoryEffects({ captures: [], nowMs: NOW_MS });
    try {
      const dead = spawnSync(process.execPath, ["-e", "0"]).pid; // exited and reaped
      const live = `ballast-build-${process.ppid}-l1v3aa`; // the test runner's parent still runs
      mkdirSync(join(fx.scratchDir, `ballast-build-${dead}-k1ll3d`, "duckdb"), { recursive: true });
      writeFileSync(join(fx.scratchDir, `ballast-build-${dead}-k1ll3d`, "duckdb", "spill.tmp"), "x");
      mkdirSync(join(fx.scratchDir, live));
      await expect(runBuild({ asOf: AS_OF, registry: REGISTRY }, fx)).rejects.toThrow(/nothing to build/);
      expect(readdirSync(fx.scratchDir)).toEqual([live]);
    } finally {
      fx.dispose();
    }
  });
});

/** A committed expected JSON file (files/<key>, build id already replaced by BUILD_ID). */
const expected = (key: string) => JSON.parse(readFileSync(join(EXPECTED, "files", key), "utf8"));

// Worked by hand from REGISTRY and CAPTURES above; they read the committed fixture, so it is not just
// whatever the code printed when it was generated.
describe("the expected tree, checked by hand against the inputs", () => {
  const site = (name: string) => expected(`builds/${BUILD_ID}/site-data/${name}`);

  it("chains: Ethereum 600,000 AAA + 500,000 BBB + 200,000 EEE × 1.1 = 1,320,000 USD; Tron 400,000; total 1,720,000", () => {
    const { chains, globalTotalUsd } = site("chains.json");
    expect(globalTotalUsd).toBe(1_720_000);
    const eth = chains.find((c: { id: string }) => c.id === "ethereum");
    const tron = chains.find((c: { id: string }) => c.id === "tron");
    expect(eth).toMatchObject({ totalCirculatingUsd: 1_320_000, coinCount: 3, topStablecoinId: "aaa-one" });
    expect(tron).toMatchObject({ totalCirculatingUsd: 400_000, coinCount: 1, coinHhi: 1 });
    // dominance 1,320,000 / 1,720,000 = 0.767441…; 400,000 / 1,720,000 = 0.232558…
    expect(eth.dominanceShare).toBeCloseTo(0.76744186, 8);
    expect(tron.dominanceShare).toBeCloseTo(0.23255814, 8);
    // HHI over Ethereum's coins: (600/1320)² + (500/1320)² + (220/1320)² = 0.206612 + 0.143480 + 0.027778 = 0.377870
    expect(eth.coinHhi).toBeCloseTo(0.37787, 5);
  });

  it("non-USD share: EEE's 220,000 of 1,720,000 = 12.7907 %; a month back 220,000 of 1,620,000 (AAA 900,000) = 13.5802 %", () => {
    const share = site("non-usd-share.json");
    expect(share.current).toMatchObject({
      date: AS_OF,
      totalUsd: 1_720_000,
      fiatNonUsdUsd: 220_000,
      fiatNonUsdSharePct: 12.7907,
    });
    expect(share.history[0]).toMatchObject({
      date: AS_OF - 30 * 86400,
      totalUsd: 1_620_000,
      fiatNonUsdSharePct: 13.5802,
    });
  });

  it("peg: BBB's list price 0.97 is (0.97 − 1) × 10,000 = −300 bps off its USD par; EEE at 1.1 is on its ECB reference", () => {
    const peg = site("peg-summary.json");
    const byId = Object.fromEntries(peg.coins.map((c: { id: string }) => [c.id, c]));
    expect(byId["bbb-two"].currentDeviationBps).toBe(-300);
    expect(byId["eee-euro"]).toMatchObject({
      currentDeviationBps: 0,
      referenceEvidence: { pegReference: EUR_USD, referenceSource: "fx" },
    });
    expect(peg.summary).toMatchObject({ worstCurrent: { id: "bbb-two", bps: -300 }, coinsAtPeg: 2, totalTracked: 3 });
  });

  it("supply: AAA 1,000,000 now and 900,000 a day, week and month back (change1d +100,000); EEE 200,000 EUR = 220,000 USD", () => {
    expect(site("stablecoin-summary.json")["aaa-one"].supplyUsd).toEqual({
      current: 1_000_000,
      prevDay: 900_000,
      prevWeek: 900_000,
      prevMonth: 900_000,
      change1d: 100_000,
      change7d: 100_000,
      change30d: 100_000,
    });
    expect(
      site("supply-history/aaa-one.json").map((p: { date: number; circulatingUsd: number }) => [
        p.date,
        p.circulatingUsd,
      ]),
    ).toEqual([
      [AS_OF - 30 * 86400, 900_000],
      [AS_OF - 7 * 86400, 900_000],
      [AS_OF - 86400, 900_000],
      [AS_OF, 1_000_000],
    ]);
    const eee = site("stablecoin/eee-euro.json").tokens.at(-1);
    expect(eee.totalCirculating).toEqual({ peggedEUR: 200_000 });
    expect(eee.totalCirculatingUSD.peggedEUR).toBeCloseTo(200_000 * EUR_USD, 6);
  });

  it("top-stablecoins dataset of the day: the three coins by USD supply, its comment line naming the inputs' digest", () => {
    const csv = readFileSync(join(EXPECTED, "files/datasets/top-stablecoins/2025-09-07.csv"), "utf8").split("\n");
    // inputsDigest: sha256 of the sorted `<path>:<sha256>` lines of the two captures
    const digest = sha256(
      CAPTURES.map((c) => `${c.path}:${c.sha256}`)
        .sort()
        .join("\n"),
    );
    expect(csv[0]).toBe(
      `# ballast dataset top-stablecoins as-of 2025-09-07T00:00:00Z methodology ballast-price-consensus-v3,ballast-supply-chain-guard-v1 inputs sha256:${digest}`,
    );
    expect(csv.slice(2, 5).map((l) => l.split(",").slice(0, 1).concat(l.split(",").slice(5, 8)))).toEqual([
      ["aaa-one", "1", "1000000", "2"],
      ["bbb-two", "0.97", "500000", "1"],
      ["eee-euro", "1.1", "220000.00000000003", "1"],
    ]);
  });

  it("manifest and pointer: as-of 2025-09-07, two captures loaded, id = stamp + first 7 hex of the content hash; the run record on the fixed clock", () => {
    const manifest = expected(`builds/${BUILD_ID}/manifest.json`);
    expect(manifest).toMatchObject({ asOf: AS_OF, generatedAt: AS_OF, clock: "replay", warnings: [] });
    expect(r1.manifest.buildId).toBe(`20250907T0000Z-${manifest.contentHash.slice(0, 7)}`);
    const loaded = manifest.sources
      .filter((s: { rows: number }) => s.rows > 0)
      .map((s: { endpoint: string; rows: number }) => [s.endpoint, s.rows]);
    expect(loaded).toEqual([
      ["defillama.stablecoins", 3],
      ["frankfurter.rates", 1],
    ]);
    expect(expected("latest.json")).toEqual({
      buildId: BUILD_ID,
      asOf: AS_OF,
      manifest: `builds/${BUILD_ID}/manifest.json`,
    });
    // NOW_MS = 2025-09-07T00:05:00.123Z → run id stamp 20250907T000500123Z, times 1757203500 (Unix s)
    expect(expected(`runs/20250907T000500123Z-${BUILD_ID}.json`)).toMatchObject({
      status: "published",
      startedAt: 1_757_203_500,
      finishedAt: 1_757_203_500,
    });
  });
});
