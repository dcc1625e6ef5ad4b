import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../build/config.ts";
import { Db } from "../../build/duckdb.ts";
import { discoverModels, parseAsserts } from "../../build/models.ts";
import { ANALYTICS } from "../../pipelines/analytics/analytics.ts";
import { must } from "../helpers/must.ts";

const MODELS = join(REPO_ROOT, "pipelines/models");

describe("asserts of the risk analytics block publication of out-of-range scores", () => {
  it("attaches each analytic's <layer>/<name>.assert.sql to its node", () => {
    const nodes = new Map(discoverModels(MODELS, ANALYTICS).map((m) => [m.name, m]));
    for (const name of ["report_cards", "dews", "stability_index"])
      expect(must(nodes.get(name), `the ${name} model`).asserts.length, name).toBeGreaterThan(0);
  });

  it("a score above 100, a grade outside the enum or a score with NR is caught", async () => {
    const db = await Db.open(":memory:", { threads: "1" });
    try {
      await db.exec(
        `create table report_cards (stablecoin_id varchar, safety_score bigint, safety_grade varchar, report_card_score bigint, report_card_grade varchar)`,
      );
      await db.exec(
        `create table safety_score_history (stablecoin_id varchar, date bigint, score bigint, grade varchar, prev_grade varchar)`,
      );
      await db.exec(
        `insert into report_cards values ('ok', 90, 'A+', 80, 'A-'), ('over', 101, 'A+', 80, 'A-'), ('enum', 50, 'E', 50, 'C-'), ('nr', 40, 'NR', null, 'NR')`,
      );
      await db.exec(`insert into safety_score_history values ('ok', 0, 90, 'A+', null), ('bad', 0, -1, 'Z', null)`);
      const caught = new Set<string>();
      for (const a of parseAsserts(readFileSync(join(MODELS, "marts/report_cards.assert.sql"), "utf8"))) {
        for (const r of await db.all<{ stablecoin_id: string }>(a.sql)) caught.add(r.stablecoin_id);
      }
      expect([...caught].sort()).toEqual(["bad", "enum", "nr", "over"]);
    } finally {
      db.close();
    }
  });
});
