import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importAllowed, importCycles, importsOf, importsOfFile, reachableFrom } from "../helpers/import-graph.ts";

// House rule (issue 32 item 5): dependencies point down, the API server loads no analytic code, and
// import circles are at most 2 (none at run time).

const ROOT = join(import.meta.dirname, "../..");

/**
 * The pipelines/ modules the API server may load (through site-data): declarations only, none importing
 * DuckDB or another analytic. Version modules (`<analytic>.version.ts`, the changelog table), row and
 * source contracts, the registry schema, explorer links. No analytic: an artifact whose transform runs
 * one (dependency-scenarios regrades with `safetyScore`, yield-rankings computes `benchmarks` and
 * `baseYield`) loads it at build time through `buildTimeModule` (site-data/contract.ts: a dynamic import
 * the emitter awaits, never a static edge). Everything the served side reads of them (grade scale, fact
 * tables, weights, input shapes, the yield read-time constants) is in
 * their version modules. A listed module the server no longer reaches fails the test: the list only
 * shrinks.
 */
const SERVER_PIPELINES_MODULES = new Set([
  "pipelines/analytics/chain-health.version.ts",
  "pipelines/analytics/changelogs.ts",
  "pipelines/analytics/depeg-audit.version.ts",
  "pipelines/analytics/depeg-detection.version.ts",
  "pipelines/analytics/depeg-resolver.version.ts",
  "pipelines/analytics/dews-validation.version.ts",
  "pipelines/analytics/dex-liquidity.version.ts",
  "pipelines/analytics/peg-score.version.ts",
  "pipelines/analytics/price-consensus.version.ts",
  "pipelines/analytics/redemption-backstops.version.ts",
  "pipelines/analytics/safety-score.version.ts",
  "pipelines/analytics/source-lineage-version.ts",
  "pipelines/analytics/stability-index.version.ts",
  "pipelines/analytics/stress-signals.version.ts",
  "pipelines/analytics/supply.version.ts",
  "pipelines/analytics/yield-scoring.version.ts",
  "pipelines/onchain/contract.ts",
  "pipelines/onchain/explorers.ts",
  "pipelines/onchain/methodology.ts",
  "pipelines/registry/schema.ts",
  "pipelines/sources/column-type.ts",
  "pipelines/sources/usds-status-contract.ts",
]);

/** Packages a declaration module may import: the schema library and URL helpers, nothing with effects. */
const DECLARATION_PACKAGES = new Set(["zod", "node:url"]);

const tracked = () =>
  execFileSync("git", ["ls-files", "*.ts"], { cwd: ROOT, encoding: "utf8" })
    .split("\n")
    .filter((f) => f !== "");

describe("dependencies point down", () => {
  // every static import, type-only ones included: a type import names a module the server would load
  // as soon as the import lost its `type`
  const reached = reachableFrom(ROOT, "api/server.ts").filter((f) => f.startsWith("pipelines/"));

  it("the API server reaches only the declaration modules of pipelines/ (no analytic, no DuckDB)", () => {
    expect(reached.filter((f) => !SERVER_PIPELINES_MODULES.has(f))).toEqual([]);
    expect([...SERVER_PIPELINES_MODULES].filter((f) => !reached.includes(f))).toEqual([]);
    for (const f of reached) {
      const packages = [...readFileSync(join(ROOT, f), "utf8").matchAll(/from\s+"([^."][^"]*)"/g)].map((m) => m[1]);
      expect(
        packages.filter((p) => !DECLARATION_PACKAGES.has(p)),
        f,
      ).toEqual([]);
    }
  });

  it("import circles among tracked modules: at most 2, none at run time (type-only imports are erased)", () => {
    const files = tracked();
    const edges = files.flatMap((f) => importsOfFile(ROOT, f));
    const all = importCycles(files, edges);
    expect(all.length, JSON.stringify(all)).toBeLessThanOrEqual(2);
    expect(
      importCycles(
        files,
        edges.filter((e) => !e.typeOnly),
      ),
    ).toEqual([]);
  });
});

describe("import graph helpers", () => {
  it("lists static relative imports and re-exports, marks type-only ones, skips packages and dynamic imports", () => {
    const text = [
      'import type { A } from "./a.ts";',
      'import { type B, type B2 } from "./b.ts";',
      'import { C, type D } from "../c.ts";',
      'import "./side.ts";',
      'import pkg from "zod";',
      'export { E } from "./e.ts";',
      'export type { F } from "./f.ts";',
      'export * from "./g.ts";',
      'const lazy = () => import("./dyn.ts");',
    ].join("\n");
    expect(importsOf("api/x/m.ts", text)).toEqual([
      { from: "api/x/m.ts", to: "api/x/a.ts", typeOnly: true },
      { from: "api/x/m.ts", to: "api/x/b.ts", typeOnly: true },
      { from: "api/x/m.ts", to: "api/c.ts", typeOnly: false },
      { from: "api/x/m.ts", to: "api/x/side.ts", typeOnly: false },
      { from: "api/x/m.ts", to: "api/x/e.ts", typeOnly: false },
      { from: "api/x/m.ts", to: "api/x/f.ts", typeOnly: true },
      { from: "api/x/m.ts", to: "api/x/g.ts", typeOnly: false },
    ]);
  });

  it("finds each circle once as a strongly connected component, not a chain or a lone module", () => {
    const e = (from: string, to: string, typeOnly = false) => ({ from, to, typeOnly });
    const files = ["a", "b", "c", "d", "e", "f"];
    const edges = [e("a", "b"), e("b", "c"), e("c", "a"), e("c", "d"), e("d", "e"), e("e", "d", true), e("f", "f")];
    expect(importCycles(files, edges)).toEqual([
      ["a", "b", "c"],
      ["d", "e"],
    ]);
    expect(
      importCycles(
        files,
        edges.filter((x) => !x.typeOnly),
      ),
    ).toEqual([["a", "b", "c"]]);
    expect(importCycles(["a", "b"], edges)).toEqual([]);
  });

  it("allows imports down the layers only", () => {
    const allowed: [string, string][] = [
      ["site-data/x.ts", "pipelines/y.ts"],
      ["build/x.ts", "datasets/y.ts"],
      ["pipelines/x.ts", "lib/y.ts"],
      ["api/x.ts", "site-data/y.ts"],
      ["api/x.ts", "datasets/y.ts"],
      ["test/x.ts", "scripts/y.ts"],
      ["scripts/x.ts", "build/y.ts"],
    ];
    const forbidden: [string, string][] = [
      ["pipelines/x.ts", "site-data/y.ts"],
      ["site-data/x.ts", "datasets/y.ts"],
      ["site-data/x.ts", "api/y.ts"],
      ["lib/x.ts", "pipelines/y.ts"],
      ["api/x.ts", "pipelines/y.ts"],
      ["api/x.ts", "build/y.ts"],
      ["build/x.ts", "api/y.ts"],
      ["build/x.ts", "scripts/y.ts"],
      ["datasets/x.ts", "test/y.ts"],
    ];
    expect(allowed.filter(([a, b]) => !importAllowed(a, b))).toEqual([]);
    expect(forbidden.filter(([a, b]) => importAllowed(a, b))).toEqual([]);
  });
});
