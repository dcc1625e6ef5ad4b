import { mkdtempSync, readdirSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Db } from "../../build/duckdb.ts";
import { collectCaptures } from "../../build/captures.ts";
import { RawLoader } from "../../build/load.ts";
import { loadBuildConfig } from "../../build/config.ts";
import { defaultBuildEffects } from "../../build/effects.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import { NOT_READ, STAGED_CACHE_FOLDER, STAGED_CACHE_MAX_IDLE_SEC, StagedCache } from "../../build/staged-cache.ts";
import { rawTables } from "../../pipelines/sources/endpoints.ts";
import type { CaptureInfo } from "../../pipelines/sources/types.ts";
import { CAPTURE_DIR, RECORDED_AS_OF } from "../helpers/build-once.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "ballast-staged-cache-test-"));
  dirs.push(d);
  return d;
};

const day = (d: string) => Date.parse(`${d}T00:00:00Z`) / 1000;

/** A Frankfurter time-series capture: 3 days of EUR rates, one bad rate (dropped `fx-rate-invalid`). */
const info = (sha: string): CaptureInfo => ({
  endpoint: "frankfurter.rates",
  params: { base: "EUR" },
  observedAt: day("2025-03-01"),
  origin: "recorded",
  path: "ecb/eurofxref-hist.csv",
  sha256: sha,
});
const payload = {
  base: "EUR",
  rates: {
    "2025-03-01": { USD: 1.04, CHF: 0.94 },
    "2025-03-02": { USD: 1.05, CHF: -1 },
    "2025-03-03": { USD: 1.06, CHF: 0.95 },
  },
};
const SHA_A = "a".repeat(64);

/** Stages `captures` (info, payload) into a fresh database as of `asOf` and returns the raw rows, report and hits. */
async function load(cache: StagedCache | null, asOf: number, captures: [CaptureInfo, unknown][]) {
  const db = await Db.open(":memory:", { threads: "1" });
  try {
    const loader = new RawLoader(db, asOf, cache);
    for (const [i, p] of captures) await loader.stage(i, p);
    const reports = await loader.finish(captures.map(([i]) => i));
    const rows = await db.all("select date, quote, rate from raw_frankfurter__rates");
    return { rows, report: reports.find((r) => r.endpoint === "frankfurter.rates"), hits: loader.cacheHits };
  } finally {
    db.close();
  }
}

describe("parsed-capture cache (StagedCache through RawLoader)", () => {
  it("a second load of the same capture reads the cache and gives the same rows, drops and as-of filter", async () => {
    const cache = new StagedCache(tempDir());
    const asOf = day("2025-03-03");
    const cold = await load(cache, asOf, [[info(SHA_A), payload]]);
    expect(cold.hits).toBe(0);
    expect(cold.rows).toHaveLength(5);
    expect(cold.report?.dropped).toEqual({ "fx-rate-invalid": 1 });
    // The payload is not read on a hit: an unparseable one proves the rows come from the cache.
    const warm = await load(cache, asOf, [[info(SHA_A), { not: "a payload" }]]);
    expect(warm.hits).toBe(1);
    expect(warm.rows).toEqual(cold.rows);
    expect(warm.report).toEqual(cold.report);
    // Cached rows are kept before the as-of filter: an earlier as-of keeps fewer of them.
    const earlier = await load(cache, day("2025-03-01"), [[info(SHA_A), { not: "a payload" }]]);
    expect(earlier.hits).toBe(1);
    expect(earlier.rows).toEqual([
      { date: "2025-03-01", quote: "CHF", rate: 0.94 },
      { date: "2025-03-01", quote: "USD", rate: 1.04 },
    ]);
    expect(earlier.report?.captures[0].rows).toBe(2);
  });

  it("other bytes, another identity or no content hash parse again", async () => {
    const cache = new StagedCache(tempDir());
    const asOf = day("2025-03-03");
    await load(cache, asOf, [[info(SHA_A), payload]]);
    expect((await load(cache, asOf, [[info("b".repeat(64)), payload]])).hits).toBe(0);
    expect((await load(cache, asOf, [[{ ...info(SHA_A), observedAt: day("2025-03-05") }, payload]])).hits).toBe(0);
    expect((await load(cache, asOf, [[{ ...info(SHA_A), params: { base: "USD" } }, payload]])).hits).toBe(0);
    expect(cache.keyOf({ ...info("fixture"), sha256: "fixture" })).toBeNull();
  });

  it("caches a rejected capture as rejected, with no rows", async () => {
    const cache = new StagedCache(tempDir());
    const asOf = day("2025-03-03");
    const bad = { base: "EUR", rates: "none" };
    const cold = await load(cache, asOf, [[info(SHA_A), bad]]);
    expect(cold.report?.dropped).toEqual({ "payload-rejected": 1 });
    const warm = await load(cache, asOf, [[info(SHA_A), payload]]);
    expect(warm.hits).toBe(1);
    expect(warm.rows).toEqual([]);
    expect(warm.report).toEqual(cold.report);
    expect(readdirSync(cache.dir).filter((f) => f.endsWith(".parquet"))).toEqual([]);
  });

  it("prune removes entries unused for longer than the idle limit and keeps the others", async () => {
    const cache = new StagedCache(tempDir());
    await load(cache, day("2025-03-03"), [
      [info(SHA_A), payload],
      [info("c".repeat(64)), payload],
    ]);
    const keyA = cache.keyOf(info(SHA_A)) as string;
    const old = new Date(Date.now() - (STAGED_CACHE_MAX_IDLE_SEC + 60) * 1000);
    utimesSync(join(cache.dir, `${keyA}.json`), old, old);
    expect(cache.prune()).toBe(2);
    expect(cache.get(keyA)).toBeNull();
    expect(cache.get(cache.keyOf(info("c".repeat(64))) as string)).not.toBeNull();
  });
});

describe("recorded files through the cache", () => {
  /** Collects and loads every recorded capture as of the recorded as-of; returns what a build would record. */
  async function loadRecorded(cache: StagedCache) {
    const db = await Db.open(":memory:", { threads: "1" });
    try {
      const loader = new RawLoader(db, RECORDED_AS_OF, cache);
      let notRead = 0;
      const set = await collectCaptures(
        CAPTURE_DIR,
        undefined,
        RECORDED_AS_OF,
        async (info, payload) => {
          if (payload === NOT_READ) notRead++;
          await loader.stage(info, payload);
        },
        cache,
      );
      const sources = await loader.finish(set.captures);
      const tables: Record<string, string> = {};
      for (const t of rawTables()) {
        const [{ n, digest }] = await db.all<{ n: number; digest: string | null }>(
          `select count(*)::integer as n, md5(string_agg(t::varchar, '|')) as digest from ${t.name} t`,
        );
        tables[t.name] = `${n} ${digest}`;
      }
      const { captures, ...readerSide } = set;
      return { notRead, hits: loader.cacheHits, captures, readerSide, sources, tables };
    } finally {
      db.close();
    }
  }

  it("a second load reads no recorded file again and loads the same rows, drops and reports", async () => {
    const cache = new StagedCache(tempDir());
    const cold = await loadRecorded(cache);
    expect(cold.notRead).toBe(0);
    expect(cold.hits).toBe(0);
    const warm = await loadRecorded(cache);
    expect(warm.notRead).toBeGreaterThan(40); // every recorded capture (a file may hold several)
    expect(warm.hits).toBe(warm.notRead);
    expect(warm.captures).toEqual(cold.captures);
    expect(warm.readerSide).toEqual(cold.readerSide);
    expect(warm.sources).toEqual(cold.sources);
    expect(warm.tables).toEqual(cold.tables);
    expect(Object.values(cold.tables).some((v) => !v.startsWith("0 "))).toBe(true);
  });
});

describe("where the CLI keeps the cache", () => {
  it("defaults under each data dir's scratch folder, not a folder every checkout on the machine shares", () => {
    const a = loadBuildConfig({ BALLAST_DATA_DIR: "/checkouts/a/data" });
    const b = loadBuildConfig({ BALLAST_DATA_DIR: "/checkouts/b/data" });
    const cacheOf = (scratchDir: string) =>
      defaultBuildEffects({
        captureDir: CAPTURE_DIR,
        sink: new FsSink("/nonexistent"),
        warehousePath: null,
        scratchDir,
      }).stagedCache?.dir;
    expect(cacheOf(a.BALLAST_SCRATCH_DIR)).toBe(`/checkouts/a/data/scratch/${STAGED_CACHE_FOLDER}`);
    expect(cacheOf(b.BALLAST_SCRATCH_DIR)).toBe(`/checkouts/b/data/scratch/${STAGED_CACHE_FOLDER}`);
    expect(cacheOf(a.BALLAST_SCRATCH_DIR)?.startsWith(tmpdir())).toBe(false);
    // An explicit scratch dir still wins.
    expect(loadBuildConfig({ BALLAST_DATA_DIR: "/x", BALLAST_SCRATCH_DIR: "/fast/disk" }).BALLAST_SCRATCH_DIR).toBe(
      "/fast/disk",
    );
  });
});
