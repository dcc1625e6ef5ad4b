import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ARTIFACT_ROUTES } from "../../api/routes/artifact-routes.ts";
import { ROUTES } from "../../api/routes/index.ts";
import { discoverArtifacts, SITE_DATA_ARTIFACTS } from "../../site-data/artifacts.ts";
import { buildTimeModule, sqlArtifact } from "../../site-data/contract.ts";

const CONTRACT = join(import.meta.dirname, "../../site-data/contract.ts");

/** A module declaring one sqlArtifact with its SQL file, written into `dir`. */
function declare(dir: string, file: string, key: string, path: string) {
  writeFileSync(join(dir, `${file}.sql`), 'select 1::integer as "oneValue"\n');
  writeFileSync(
    join(dir, `${file}.ts`),
    [
      `import { z } from "zod";`,
      `import { sqlArtifact } from ${JSON.stringify(CONTRACT)};`,
      `export const SCHEMA = z.object({ oneValue: z.number() });`,
      `export const art = sqlArtifact(import.meta.url, { key: ${JSON.stringify(key)}, schemaVersion: "1.0.0", maxAgeSec: 60, description: "x", path: ${JSON.stringify(path)}, schema: SCHEMA, sql: ${JSON.stringify(file)}, shape: "one",`,
      `  route: { operationId: "getX", path: "/api/x", summary: "x", description: "x", cache: "standard", meta: true } });`,
    ].join("\n"),
  );
}

describe("artifacts found by file (issue 18 item 7)", () => {
  it("a module with one declaration and one SQL file is discovered, with its SQL read beside it; other exports are ignored", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ballast-artifacts-"));
    declare(dir, "new-thing", "new-thing", "site-data/new-thing.json");
    const found = await discoverArtifacts(dir);
    expect(found.map((a) => a.key)).toEqual(["new-thing"]);
    expect(found[0].queries.main).toContain('"oneValue"');
    expect(found[0].assemble({ main: [{ oneValue: 1 }] }, { asOf: 5, sourceObservedAt: {} })).toEqual({
      files: [{ path: "site-data/new-thing.json", payload: { oneValue: 1 }, rows: 1 }],
      dataAsOf: 5,
    });
  });

  it("two artifacts with one key, or one output path, stop discovery naming them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ballast-artifacts-"));
    declare(dir, "a", "same", "site-data/a.json");
    declare(dir, "b", "same", "site-data/b.json");
    await expect(discoverArtifacts(dir)).rejects.toThrow("two site-data artifacts share the key same");
    const other = mkdtempSync(join(tmpdir(), "ballast-artifacts-"));
    declare(other, "a", "first", "site-data/x.json");
    declare(other, "b", "second", "site-data/x.json");
    await expect(discoverArtifacts(other)).rejects.toThrow("artifacts first and second both publish site-data/x.json");
  });

  it("a `one` artifact whose SQL returns other than one row fails naming its SQL file; `many` publishes the rows", () => {
    const one = sqlArtifact(import.meta.url, {
      key: "k",
      schemaVersion: "1",
      maxAgeSec: 1,
      description: "",
      path: "p.json",
      schema: z.any(),
      sql: "../../site-data/daily_digest",
      shape: "one",
    });
    expect(() => one.assemble({ main: [] }, { asOf: 0, sourceObservedAt: {} })).toThrow(
      "daily_digest.sql returned 0 rows, expected exactly one",
    );
    const many = sqlArtifact(import.meta.url, {
      key: "k",
      schemaVersion: "1",
      maxAgeSec: 1,
      description: "",
      path: "p.json",
      schema: z.any(),
      sql: "../../site-data/daily_digest",
      shape: "many",
    });
    expect(many.assemble({ main: [{ a: 1 }, { a: 2 }] }, { asOf: 0, sourceObservedAt: {} }).files[0]).toMatchObject({
      payload: [{ a: 1 }, { a: 2 }],
      rows: 2,
    });
  });

  it("per-entity files by idColumn (query order, the column left out), a transform, a rows count and dataAsOf over every file", () => {
    const perCoin = sqlArtifact(import.meta.url, {
      key: "k",
      schemaVersion: "1",
      maxAgeSec: 1,
      description: "",
      path: "site-data/k/{id}.json",
      idColumn: "coin",
      schema: z.any(),
      sql: "../../site-data/daily_digest",
      shape: "many",
      transform: (points: { v: number }[]) => ({ total: points.reduce((s, p) => s + p.v, 0), points }),
      rows: (p: { points: unknown[] }) => p.points.length * 10,
      dataAsOf: (payloads: { total: number }[], ctx) => ctx.asOf + payloads.length,
    });
    const rows = [
      { coin: "bbb", v: 1 },
      { coin: "aaa", v: 2 },
      { coin: "bbb", v: 3 },
    ];
    expect(perCoin.assemble({ main: rows }, { asOf: 100, sourceObservedAt: {} })).toEqual({
      files: [
        { path: "site-data/k/bbb.json", payload: { total: 4, points: [{ v: 1 }, { v: 3 }] }, rows: 20 },
        { path: "site-data/k/aaa.json", payload: { total: 2, points: [{ v: 2 }] }, rows: 10 },
      ],
      dataAsOf: 102,
    });
    expect(() =>
      sqlArtifact(import.meta.url, {
        key: "k",
        schemaVersion: "1",
        maxAgeSec: 1,
        description: "",
        path: "site-data/k.json",
        idColumn: "coin",
        schema: z.any(),
        sql: "../../site-data/daily_digest",
        shape: "many",
      }),
    ).toThrow("a path with {id} goes with idColumn");
    const optional = sqlArtifact(import.meta.url, {
      key: "k",
      schemaVersion: "1",
      maxAgeSec: 1,
      description: "",
      path: "site-data/k.json",
      schema: z.any(),
      sql: "../../site-data/daily_digest",
      shape: "one",
      optional: true,
    });
    expect(optional.optional).toBe(true);
    expect(optional.assemble({ main: [] }, { asOf: 0, sourceObservedAt: {} })).toEqual({ files: [], dataAsOf: null });
  });

  it("rows may count from the shaped row (a column beside the payload); layout files follow each file, derived from its payload", () => {
    const base = {
      key: "k",
      schemaVersion: "1",
      maxAgeSec: 1,
      description: "",
      schema: z.any(),
      sql: "../../site-data/daily_digest",
    };
    const ctx = { asOf: 100, sourceObservedAt: {} };
    const one = sqlArtifact(import.meta.url, {
      ...base,
      path: "site-data/k.json",
      shape: "one",
      transform: ({ items }: { items: string[]; source_rows: number }) => ({ items }),
      rows: (_payload, row: { source_rows: number }) => row.source_rows,
      layout: (p: { items: string[] }) => [{ path: "site-data/k/items.txt", body: Buffer.from(p.items.join("\n")) }],
    });
    expect(one.assemble({ main: [{ items: ["a", "b"], source_rows: 7 }] }, ctx)).toEqual({
      files: [
        { path: "site-data/k.json", payload: { items: ["a", "b"] }, rows: 7 },
        { path: "site-data/k/items.txt", payload: null, body: Buffer.from("a\nb"), rows: 7 },
      ],
      dataAsOf: 100,
    });
    const perCoin = sqlArtifact(import.meta.url, {
      ...base,
      path: "site-data/k/{id}.json",
      idColumn: "coin",
      shape: "many",
      layout: (points: { v: number }[]) => [
        { path: `site-data/k/${points[0].v}.bin`, body: Uint8Array.of(points.length) },
      ],
      // the payloads only: not the layout files
      dataAsOf: (payloads: { v: number }[][]) => payloads.flat().reduce((s, p) => s + p.v, 0),
    });
    const rows = [
      { coin: "a", v: 1 },
      { coin: "b", v: 5 },
      { coin: "a", v: 2 },
    ];
    expect(perCoin.assemble({ main: rows }, ctx)).toEqual({
      files: [
        { path: "site-data/k/a.json", payload: [{ v: 1 }, { v: 2 }], rows: 2 },
        { path: "site-data/k/1.bin", payload: null, body: Uint8Array.of(2), rows: 2 },
        { path: "site-data/k/b.json", payload: [{ v: 5 }], rows: 1 },
        { path: "site-data/k/5.bin", payload: null, body: Uint8Array.of(1), rows: 1 },
      ],
      dataAsOf: 8,
    });
  });

  it("servedSchema is what routes read the file with; the build still checks the payload against schema", () => {
    const strict = z.object({ rows: z.array(z.number()) });
    const loose = z.object({ rows: z.array(z.unknown()) });
    const base = {
      key: "k",
      schemaVersion: "1",
      maxAgeSec: 1,
      description: "",
      path: "site-data/k.json",
      sql: "../../site-data/daily_digest",
      shape: "one" as const,
    };
    const served = sqlArtifact(import.meta.url, { ...base, schema: strict, servedSchema: loose });
    expect(served.schema).toBe(strict);
    expect(served.outputs.main.schema).toBe(loose);
    expect(served.outputs.main.schema.safeParse({ rows: ["x"] }).success).toBe(true);
    expect(served.schema.safeParse({ rows: ["x"] }).success).toBe(false);
    expect(sqlArtifact(import.meta.url, { ...base, schema: strict }).outputs.main.schema).toBe(strict);
  });

  it("the build emits every artifact of site-data/ and the route table serves every declared artifact route", () => {
    expect(SITE_DATA_ARTIFACTS.map((a) => a.key)).toEqual(
      expect.arrayContaining(["stablecoins", "daily-digest", "stress-signals"]),
    );
    expect(ARTIFACT_ROUTES.map((r) => r.path)).toContain("/api/daily-digest");
    for (const r of ARTIFACT_ROUTES) expect(ROUTES).toContain(r);
  });
});

describe("build-time modules (an analytic an artifact's transform runs, never loaded by the API server)", () => {
  it("imports once on prepare, and refuses to be read before it", async () => {
    let imports = 0;
    const analytic = buildTimeModule("the test analytic", async () => {
      imports++;
      return { double: (x: number) => 2 * x };
    });
    const artifact = sqlArtifact(import.meta.url, {
      key: "build-time-test",
      schemaVersion: "1",
      maxAgeSec: 60,
      description: "test",
      path: "site-data/build-time-test.json",
      schema: z.object({ twice: z.number() }),
      sql: "../../site-data/daily_digest",
      shape: "one",
      prepare: analytic.load,
      transform: (row: { oneValue: number }) => ({ twice: analytic.get().double(row.oneValue) }),
    });
    const ctx = { asOf: 5, sourceObservedAt: {} };
    expect(() => artifact.assemble({ main: [{ oneValue: 3 }] }, ctx)).toThrow(/the test analytic is not loaded/);
    expect(imports).toBe(0);
    await artifact.prepare?.();
    await artifact.prepare?.();
    expect(imports).toBe(1);
    expect(artifact.assemble({ main: [{ oneValue: 3 }] }, ctx).files[0].payload).toEqual({ twice: 6 });
  });
});
