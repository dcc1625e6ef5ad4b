import { describe, expect, it } from "vitest";
import { z } from "zod";
import { emptinessOf } from "../../build/captures.ts";
import { manifestDifferences } from "../../build/run-build.ts";
import { poolTvlOrDrop, RowCollector } from "../../pipelines/sources/parse-helpers.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { cleanManifestRecords } from "../helpers/manifest.ts";

describe("emptinessOf: which recorded files hold no data", () => {
  it("a 0-byte or blank file is `empty-file`, a CSV with only its header `header-only`", () => {
    expect(emptinessOf("a.csv", "")).toBe("empty-file");
    expect(emptinessOf("a.json", " \n\r\n\t")).toBe("empty-file");
    expect(emptinessOf("a.csv", "Date,USD\n\n")).toBe("header-only");
    expect(emptinessOf("a.csv", "Date,USD\r\n2025-05-09,1.1252\r\n")).toBeNull();
  });

  it("a JSON file of one line (a whole payload) is data, not a header", () => {
    expect(emptinessOf("a.json", '{"peggedAssets":[]}')).toBeNull();
  });
});

describe("RowCollector.addUnique: repeated upstream keys", () => {
  const Row = z.object({ id: z.string(), supply: z.number() });
  it("keeps the first row of a key and counts identical and conflicting repeats apart", () => {
    const rc = new RowCollector(Row);
    rc.addUnique("a", { id: "a", supply: 1 });
    rc.addUnique("b", { id: "b", supply: 2 });
    rc.addUnique("a", { id: "a", supply: 1 });
    rc.addUnique("a", { id: "a", supply: 5 });
    rc.addUnique("b", { id: "b", supply: 3 });
    const { rows, dropped } = rc.result();
    expect(rows).toEqual([
      { id: "a", supply: 1 },
      { id: "b", supply: 2 },
    ]);
    expect(dropped).toEqual({ "duplicate-identical": 1, "duplicate-conflicting": 2 });
  });

  it("an invalid first row is counted as invalid and does not claim its key", () => {
    const rc = new RowCollector(Row);
    rc.addUnique("a", { id: "a", supply: "x" });
    rc.addUnique("a", { id: "a", supply: 4 });
    expect(rc.result().rows).toEqual([{ id: "a", supply: 4 }]);
    expect(rc.result().dropped).toEqual({ "invalid-supply": 1 });
  });
});

describe("poolTvlOrDrop: a DEX pool's TVL", () => {
  it("keeps a plausible amount ≥ 0 (numeric strings too) and drops the pool otherwise, counting why", () => {
    const rc = new RowCollector(z.object({}));
    const kept = [0, 1.5e8, "2500.5", 1e13].map((v) => poolTvlOrDrop(v, rc));
    expect(kept).toEqual([0, 1.5e8, 2500.5, 1e13]);
    expect(rc.result().dropped).toEqual({});
    const dropped = [1e13 + 1, "Infinity", Number.NaN, null, undefined, "", "n/a", -1, {}].map((v) =>
      poolTvlOrDrop(v, rc),
    );
    expect(dropped).toEqual(Array(9).fill(undefined));
    expect(rc.result().dropped).toEqual({ "implausible-value": 3, "tvl-invalid": 6 });
  });
});

describe("manifestDifferences: what a reused build's stored manifest does not record", () => {
  const file = (path: string, artifact: string, sha256: string) => ({
    path,
    sha256,
    bytes: 1,
    rows: null,
    dataAsOf: null,
    schemaVersion: "1.0.0",
    artifact,
  });
  const base: BuildManifest = {
    schemaVersion: "1.4.0",
    buildId: "b",
    asOf: 1,
    generatedAt: 1,
    clock: "replay",
    contentHash: "h",
    files: [file("site-data/x.json", "x", "aa"), file("ballast.duckdb", "duckdb", "d1")],
    sources: [],
    ...cleanManifestRecords(),
    readerDropped: { "f.csv": { "csv-parse-error": 1 } },
  };
  it("names the top-level fields whose values differ, none when equal (key order aside)", () => {
    // the same files with keys in another order (as a freshly assembled manifest has them)
    const reordered = {
      ...structuredClone(base),
      files: base.files.map(({ artifact, path, ...rest }) => ({ artifact, ...rest, path })),
    };
    expect(manifestDifferences(base, reordered)).toEqual([]);
    const run = { ...structuredClone(base), readerDropped: { "f.csv": { "csv-parse-error": 2 } }, warnings: ["w"] };
    expect(manifestDifferences(base, run)).toEqual(["readerDropped", "warnings"]);
  });

  it("ignores the DuckDB file's bytes (never reproducible) but not any other file", () => {
    const duck = { ...structuredClone(base), files: [base.files[0], file("ballast.duckdb", "duckdb", "d2")] };
    expect(manifestDifferences(base, duck)).toEqual([]);
    const other = { ...structuredClone(base), files: [file("site-data/x.json", "x", "bb"), base.files[1]] };
    expect(manifestDifferences(base, other)).toEqual(["files"]);
  });
});
