import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type ColumnDecl,
  columnDocOf,
  commentStatements,
  PUBLISHED_TABLE_DOCS,
  SHARED_COLUMN_DOCS,
} from "../../datasets/table-docs.ts";
import { derived, fieldDocsOf, fromColumn } from "../../datasets/contract.ts";
import { DATASETS } from "../../datasets/datasets.ts";
import { nameDerived } from "../helpers/name-derived.ts";

// The column declarations of datasets/table-docs.ts (the one source of every COMMENT ON COLUMN and of the
// datapackage description of each dataset field copied from a column), checked without a build.

/** Every declaration: `table.column` (or `*.column` for a shared one) → its text. */
const DECLARATIONS: [string, ColumnDecl][] = [
  ...Object.entries(SHARED_COLUMN_DOCS).map(([c, d]): [string, ColumnDecl] => [`*.${c}`, d]),
  ...Object.entries(PUBLISHED_TABLE_DOCS).flatMap(([t, doc]) =>
    Object.entries(doc.columns).map(([c, d]): [string, ColumnDecl] => [`${t}.${c}`, d]),
  ),
];
const text = (d: ColumnDecl) => (typeof d === "string" ? d : d.description);

describe("nameDerived (the filler detector)", () => {
  it("flags texts that only restate the column name, with or without unit boilerplate", () => {
    expect(nameDerived("stablecoin_id", "Stablecoin id")).toBe(true);
    expect(nameDerived("amount_raw", "Amount raw, token base units")).toBe(true);
    expect(nameDerived("supply_chain_guard_chains_json", "Supply chain guard chains (JSON text)")).toBe(true);
    expect(nameDerived("x", "the x column")).toBe(true);
    expect(nameDerived("hour_ts", "Hour ts, Unix seconds")).toBe(true);
  });
  it("passes texts that add meaning", () => {
    expect(nameDerived("symbol", "Ticker symbol as the registry writes it")).toBe(false);
    expect(nameDerived("hour_ts", "Start of the UTC hour, Unix seconds")).toBe(false);
  });
});

describe("column declarations", () => {
  it("none is empty or derived from its column name", () => {
    expect(DECLARATIONS.length).toBeGreaterThan(300);
    const bad = DECLARATIONS.filter(([k, d]) => {
      const column = k.slice(k.indexOf(".") + 1);
      return text(d).trim().length < 8 || nameDerived(column, text(d));
    }).map(([k, d]) => `${k}: ${text(d)}`);
    expect(bad).toEqual([]);
  });

  it("a declaration with a unit names it in its text or a synonym of it", () => {
    const SAYS: Record<string, RegExp> = {
      USD: /USD|\$/,
      bps: /basis points|bps/,
      "Unix seconds": /Unix s/,
      seconds: /second/i,
      "token units": /token units/,
      "base units": /base units/,
      "score 0-100": /0-100|score/i,
      "UTC day": /UTC|day|date|YYYY/i,
      "ratio 0-1": /0-1|share|ratio/i,
      "percent 0-100": /percent|%/i,
      days: /days/i,
    };
    const silent = DECLARATIONS.filter(
      ([, d]) => typeof d !== "string" && d.unit && !SAYS[d.unit]?.test(d.description),
    );
    expect(silent.map(([k]) => k)).toEqual([]);
  });

  it("an undeclared column has no comment: columnDocOf and commentStatements throw, naming it", () => {
    expect(() => columnDocOf("stablecoins", "not_a_column")).toThrow(
      /stablecoins\.not_a_column has no declared comment/,
    );
    expect(() => commentStatements("pub", "chain_supply", ["chain_id", "brand_new_col"])).toThrow(/brand_new_col/);
    expect(() => columnDocOf("no_such_table", "stablecoin_id")).toThrow(/not published/);
  });

  it("a table's own declaration wins over the shared one of the same name", () => {
    expect(columnDocOf("safety_score_history", "date").unit).toBe("Unix seconds");
    expect(columnDocOf("dews_daily", "stablecoin_id")).toEqual({ description: text(SHARED_COLUMN_DOCS.stablecoin_id) });
  });
});

describe("dataset fields share the column declarations", () => {
  it("every field of every topic names its lineage; a copied field reads as its column", () => {
    let copied = 0;
    for (const ds of DATASETS) {
      const fields = fieldDocsOf(ds);
      expect(
        fields.some((f) => "column" in f),
        `${ds.topic} copies no column`,
      ).toBe(true);
      for (const f of fields) {
        if ("column" in f) {
          const [table, column] = f.column.split(".");
          const col = columnDocOf(table, column);
          expect({ description: f.description, unit: f.unit }, `${ds.topic}.${f.name}`).toEqual({
            description: col.description,
            unit: col.unit,
          });
          copied++;
        } else {
          // a derived field names published columns (all declared) and documents itself
          for (const c of f.derivedFrom) expect(() => columnDocOf(...(c.split(".") as [string, string]))).not.toThrow();
          expect(f.description.length, `${ds.topic}.${f.name}`).toBeGreaterThan(10);
        }
      }
    }
    expect(copied).toBeGreaterThan(60);
  });

  it("a field documented without lineage is refused (no free-text docs)", () => {
    const row = z.object({
      a: fromColumn(z.string(), "stablecoins", "symbol"),
      b: z.string().meta({ description: "B" }),
    });
    expect(() => fieldDocsOf({ topic: "t", columns: ["a", "b"], row })).toThrow(/field b is not documented/);
    const ok = z.object({ b: derived(z.string(), ["stablecoins.chains_json"], "Chains, `;`-joined") });
    expect(fieldDocsOf({ topic: "t", columns: ["b"], row: ok })).toEqual([
      { name: "b", description: "Chains, `;`-joined", derivedFrom: ["stablecoins.chains_json"] },
    ]);
  });
});
