import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../build/config.ts";
import { Db } from "../../build/duckdb.ts";
import { discoverModels } from "../../build/models.ts";
import { ANALYTICS } from "../../pipelines/analytics/analytics.ts";

// Every mart (the tables the artifacts and the DuckDB file publish) carries asserts, and every SQL mart
// that declares its primary key (`pk: (…)` on its grain line) has a key assert that a duplicated or
// null key actually trips: run against a table holding just the key columns.

const MODELS = join(REPO_ROOT, "pipelines/models");
const marts = discoverModels(MODELS, ANALYTICS).filter((m) => m.layer === "marts");

/** The key columns a SQL mart declares on its grain line, or null without a `pk:`. */
function declaredKey(name: string): string[] | null {
  let text: string;
  try {
    text = readFileSync(join(MODELS, "marts", `${name}.sql`), "utf8");
  } catch {
    return null; // a TS analytic's output
  }
  const m = /^--.*\bpk:\s*\(([^)]+)\)/m.exec(text);
  return m ? m[1].split(",").map((c) => c.trim()) : null;
}

const keyed = marts.flatMap((m) => {
  const key = declaredKey(m.name);
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

  it("every SQL mart declaring a primary key has a key assert", () => {
    expect(keyed.length).toBeGreaterThan(15);
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
