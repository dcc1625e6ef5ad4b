import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../build/config.ts";
import { Db } from "../../build/duckdb.ts";
import { discoverModels } from "../../build/models.ts";
import { ANALYTICS } from "../../pipelines/analytics/analytics.ts";

// Every mart (the tables the artifacts and the DuckDB file publish) carries asserts, and every SQL mart
// or staging model (pipelines/models/staging or a source's folder) that declares its primary key (`pk: (…)` on its grain line) has a key assert
// that a duplicated or null key actually trips: run against a table holding just the key columns.

const MODELS = join(REPO_ROOT, "pipelines/models");
const SOURCES = join(REPO_ROOT, "pipelines/sources");
const models = discoverModels(MODELS, ANALYTICS);
const marts = models.filter((m) => m.layer === "marts");
const staging = models.filter((m) => m.layer === "staging" && m.name.startsWith("stg_"));

/** The SQL file of a mart or staging model (its layer's folder, else `pipelines/sources/<source>/`), or null (a TS analytic's output). */
function sqlFileOf(name: string, layer: string): string | null {
  if (layer === "marts")
    return existsSync(join(MODELS, "marts", `${name}.sql`)) ? join(MODELS, "marts", `${name}.sql`) : null;
  if (existsSync(join(MODELS, layer, `${name}.sql`))) return join(MODELS, layer, `${name}.sql`);
  for (const source of readdirSync(SOURCES)) {
    const file = join(SOURCES, source, `${name}.sql`);
    if (existsSync(file)) return file;
  }
  return null;
}

/** The key columns a SQL model declares on its grain line, or null without a `pk:` (or without a SQL file). */
function declaredKey(name: string, layer: string): string[] | null {
  const file = sqlFileOf(name, layer);
  if (!file) return null;
  const m = /^--.*\bpk:\s*\(([^)]+)\)/m.exec(readFileSync(file, "utf8"));
  return m ? m[1].split(",").map((c) => c.trim()) : null;
}

const keyed = [...marts, ...staging].flatMap((m) => {
  const key = declaredKey(m.name, m.layer);
  return key ? [{ model: m, key }] : [];
});

describe("mart asserts", () => {
  let db: Db;
  beforeAll(async () => {
    db = await Db.open(":memory:", { threads: "1" });
  });
  afterAll(() => db.close());

  it("every mart has at least one assert", () => {
    expect(marts.length).toBeGreaterThan(20);
    expect(marts.filter((m) => m.asserts.length === 0).map((m) => m.name)).toEqual([]);
  });

  it("every SQL mart and staging model declaring a primary key has a key assert", () => {
    expect(keyed.filter((k) => k.model.layer === "marts").length).toBeGreaterThan(15);
    // every staging model declares its key, except the DefiLlama detail history (a null chain label is the upstream total)
    expect(staging.filter((m) => !keyed.some((k) => k.model === m)).map((m) => m.name)).toEqual([
      "stg_defillama__detail",
    ]);
    const missing = keyed.filter(({ model }) => !model.asserts.some((a) => /primary key|unique/i.test(a.label)));
    expect(missing.map((k) => k.model.name)).toEqual([]);
  });

  it.each(keyed.map((k) => [k.model.name, k] as const))(
    "%s: the key assert catches a duplicate and a null key",
    async (name, { model, key }) => {
      const keyAsserts = model.asserts.filter((a) => /primary key|unique/i.test(a.label));
      const cols = key.map((c) => `"${c}" varchar`).join(", ");
      const row = (v: string | null) => `(${key.map(() => (v === null ? "null" : `'${v}'`)).join(", ")})`;
      const tripped = async (rows: string[]) => {
        await db.exec(`create or replace table ${name} (${cols})`);
        await db.exec(`insert into ${name} values ${rows.join(", ")}`);
        let n = 0;
        for (const a of keyAsserts) n += (await db.all(a.sql)).length;
        return n;
      };
      expect(await tripped([row("a"), row("b")]), "distinct keys pass").toBe(0);
      expect(await tripped([row("a"), row("a")]), "a duplicated key trips").toBeGreaterThan(0);
      if (keyAsserts.some((a) => /not null/i.test(a.label)))
        expect(await tripped([row("a"), row(null)]), "a null key trips").toBeGreaterThan(0);
    },
  );
});
