import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Db } from "../../build/duckdb.ts";
import { columnDocOf, PUBLISHED_TABLE_DOCS, PUBLISHED_TABLES, withReadmeTableList } from "../../datasets/table-docs.ts";
import { fieldDocsOf } from "../../datasets/contract.ts";
import { DATASETS } from "../../datasets/datasets.ts";
import { buildRecorded } from "../helpers/build-once.ts";
import { nameDerived } from "../helpers/name-derived.ts";

// The recorded build's ballast.duckdb (2025-09-07) documents itself: every table and column carries its declared
// comment (datasets/table-docs.ts), every dataset field copied from a column reads as that column in its datapackage,
// and the queries of docs/duckdb.md run on it.

// The page "Query the published DuckDB file" (moved from the README to docs/duckdb.md; the README links it).
const README = readFileSync(join(import.meta.dirname, "../../docs/duckdb.md"), "utf8");
let dir: string;
/** The build's own dir: `<data>/builds/<buildId>`. */
let buildDir: string;
let db: Db;

beforeAll(async () => {
  const b = await buildRecorded("ballast-duckdoc-");
  dir = b.dir;
  buildDir = join(dir, "builds", b.manifest.buildId);
  const path = join(buildDir, "ballast.duckdb");
  db = await Db.open(":memory:");
  await db.exec(`attach '${path}' as pub (read_only)`);
  await db.exec("use pub");
});
afterAll(() => {
  db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The docs page's SQL block whose first line is `-- query: <label>…`. */
function readmeQuery(label: string): string {
  const block = [...README.matchAll(/```sql\n([\s\S]*?)```/g)]
    .map((m) => m[1])
    .find((q) => q.startsWith(`-- query: ${label}`));
  if (!block) throw new Error(`docs/duckdb.md has no query "${label}"`);
  return block.replace(/;\s*$/, "");
}

describe("ballast.duckdb comments", () => {
  it("every table has a comment naming its grain and methodology", async () => {
    const tables = await db.all<{ table_name: string; comment: string | null }>(
      "select table_name, comment from duckdb_tables() where database_name = 'pub' order by table_name",
    );
    expect(tables.map((t) => t.table_name)).toEqual([...PUBLISHED_TABLES].sort());
    for (const t of tables) {
      expect(t.comment, t.table_name).toMatch(/\. Grain: .+\. Source: .+\. Methodology: .+\.$/);
    }
    const freeze = tables.find((t) => t.table_name === "blacklist_events");
    expect(freeze?.comment).toMatch(/Methodology: ballast-freeze-v\d+\.$/);
  });

  it("every column carries its declared comment, none derived from the column name", async () => {
    const cols = await db.all<{ table_name: string; column_name: string; comment: string | null }>(
      "select table_name, column_name, comment from duckdb_columns() where database_name = 'pub'",
    );
    expect(cols.length).toBeGreaterThan(400);
    const wrong = cols
      .filter((c) => c.comment !== columnDocOf(c.table_name, c.column_name).description)
      .map((c) => `${c.table_name}.${c.column_name}`);
    expect(wrong).toEqual([]);
    const filler = cols
      .filter((c) => nameDerived(c.column_name, c.comment ?? ""))
      .map((c) => `${c.table_name}.${c.column_name}: ${c.comment}`);
    expect(filler).toEqual([]);
    // no declaration is stale: each table's own declarations are columns of the table
    for (const [table, doc] of Object.entries(PUBLISHED_TABLE_DOCS)) {
      const names = new Set(cols.filter((c) => c.table_name === table).map((c) => c.column_name));
      expect(
        Object.keys(doc.columns).filter((c) => !names.has(c)),
        table,
      ).toEqual([]);
    }
    const usd = cols.find((c) => c.table_name === "chain_supply" && c.column_name === "circulating_usd");
    expect(usd?.comment).toMatch(/USD/);
    const hour = cols.find((c) => c.table_name === "mint_burn_hourly" && c.column_name === "hour_ts");
    expect(hour?.comment).toMatch(/Unix seconds/);
  });

  it("every dataset topic: a field copied from a column has the column's comment as its datapackage description", async () => {
    const comments = new Map(
      (
        await db.all<{ table_name: string; column_name: string; comment: string }>(
          "select table_name, column_name, comment from duckdb_columns() where database_name = 'pub'",
        )
      ).map((c) => [`${c.table_name}.${c.column_name}`, c.comment]),
    );
    let compared = 0;
    for (const ds of DATASETS) {
      const pkg = JSON.parse(readFileSync(join(buildDir, "datasets", ds.topic, "datapackage.json"), "utf8")) as {
        resources: { schema: { fields: { name: string; description: string }[] } }[];
      };
      const published = new Map(pkg.resources[0].schema.fields.map((f) => [f.name, f.description]));
      let copied = 0;
      for (const f of fieldDocsOf(ds)) {
        if ("column" in f) {
          expect(comments.get(f.column), `${ds.topic}.${f.name} ← ${f.column}`).toBeTruthy();
          expect(published.get(f.name), `${ds.topic}.${f.name} ← ${f.column}`).toBe(comments.get(f.column));
          copied++;
        } else {
          for (const c of f.derivedFrom) expect(comments.has(c), `${ds.topic}.${f.name} ← ${c}`).toBe(true);
          expect(published.get(f.name), `${ds.topic}.${f.name}`).toBe(f.description);
        }
      }
      expect(copied, `${ds.topic} shares no column's documentation`).toBeGreaterThan(0);
      compared += copied;
    }
    expect(DATASETS.length).toBe(7);
    expect(compared).toBeGreaterThan(60);
  });
});

describe("docs/duckdb.md 'Query the published DuckDB file'", () => {
  it("lists every published table (regenerate with npm run readme-duckdb)", () => {
    expect(withReadmeTableList(README)).toBe(README);
    for (const t of PUBLISHED_TABLES) expect(README).toContain(`| \`${t}\` |`);
  });

  it("supply by chain: chains by USD supply, largest first, plausible totals", async () => {
    const rows = await db.all<{ chain_id: string; usd_bn: number; coin_count: number }>(readmeQuery("supply by chain"));
    expect(rows.length).toBe(10);
    expect(rows[0].chain_id).toBe("ethereum");
    for (const r of rows) {
      expect(r.usd_bn).toBeGreaterThan(0);
      expect(r.usd_bn).toBeLessThan(1000); // no chain held $1T of stablecoins in 2025
      expect(r.coin_count).toBeGreaterThan(0);
    }
    expect(rows.map((r) => r.usd_bn)).toEqual([...rows.map((r) => r.usd_bn)].sort((a, b) => b - a));
  });

  it("incidents of a month: March 2023 holds USDC's SVB depeg, every start inside the month", async () => {
    const rows = await db.all<{
      symbol: string;
      direction: string;
      peak_deviation_bps: number | string;
      started_utc: string;
    }>(readmeQuery("incidents of a month"));
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(String(r.started_utc).slice(0, 7)).toBe("2023-03");
    const usdc = rows.find((r) => r.symbol === "USDC");
    expect(usdc?.direction).toBe("below");
    expect(Number(usdc?.peak_deviation_bps)).toBeLessThan(-500); // USDC traded near $0.88 on 2023-03-11
  });

  it("freezes per month: ascending months up to the as-of, positive counts", async () => {
    const rows = await db.all<{ month: string; freezes: number | string; coins: number | string }>(
      readmeQuery("freezes per month"),
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(r.month).toMatch(/^20\d\d-(0[1-9]|1[0-2])$/);
      expect(r.month <= "2025-09").toBe(true);
      expect(Number(r.freezes)).toBeGreaterThan(0);
      expect(Number(r.coins)).toBeGreaterThanOrEqual(1);
      expect(Number(r.coins)).toBeLessThanOrEqual(Number(r.freezes));
    }
    expect(rows.map((r) => r.month)).toEqual([...rows.map((r) => r.month)].sort());
  });
});
