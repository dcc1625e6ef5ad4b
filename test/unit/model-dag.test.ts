import { describe, expect, it } from "vitest";
import { Db } from "../../build/duckdb.ts";
import { type Model, ModelError, runModels } from "../../build/models.ts";
import type { Analytic } from "../../pipelines/analytics/contract.ts";

/** A SQL node reading `deps`. */
const sqlNode = (name: string, sql: string, deps: string[] = []): Model => ({
  name,
  layer: "intermediate",
  sql,
  asserts: [],
  deps,
  outputs: [name],
});

/** An analytic node: reads `input` (one select), writes one table `name` with column `n`. */
const analyticNode = (name: string, input: string, deps: string[] = []): Model => {
  const analytic: Analytic = {
    name,
    inputs: { rows: input },
    outputs: { [name]: { n: "BIGINT" } },
    run: (inputs) => ({ tables: { [name]: inputs.rows.map((r) => ({ n: Number(r.n) * 10 })) } }),
  };
  return { ...sqlNode(name, input, deps), analytic };
};

/**
 * A stand-in for the build database whose statements finish only when the test says so: it records
 * which nodes started (a `create … table <name>` or an analytic's input select) and lets the test
 * finish or fail each one, so the scheduling of runModels is observed step by step.
 */
function gatedDb() {
  const started: string[] = [];
  const gates = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();
  const gate = (name: string) =>
    new Promise<void>((resolve, reject) => {
      started.push(name);
      gates.set(name, { resolve, reject });
    });
  const conn = {
    exec: (sql: string) => gate(/create or replace table (\w+)/.exec(sql)?.[1] ?? sql),
    all: async (sql: string) => {
      if (sql.includes("build_context")) return [{ as_of: 0 }];
      if (sql.startsWith("select count(*)")) return [{ n: 1 }];
      await gate(/from (\w+)_input/.exec(sql)?.[1] ?? sql);
      return [{ n: 1 }];
    },
    loadRows: async () => {},
    connect: async () => conn,
    close: () => {},
  };
  /** Lets the event loop run until runModels has reacted to the last finished node. */
  const settle = () => new Promise((r) => setTimeout(r, 10));
  const finish = async (name: string) => {
    gates.get(name)?.resolve();
    await settle();
  };
  const fail = async (name: string) => {
    gates.get(name)?.reject(new Error(`${name} broke`));
    await settle();
  };
  return { db: conn as unknown as Db, started, finish, fail, settle };
}

describe("the model DAG runs independent nodes side by side", () => {
  it("starts two independent nodes at once and a dependent one only after its dependency", async () => {
    const g = gatedDb();
    const run = runModels(g.db, [sqlNode("a", "select 1"), sqlNode("b", "select 2"), sqlNode("c", "select a", ["a"])]);
    await g.settle();
    expect(g.started).toEqual(["a", "b"]);
    await g.finish("b");
    expect(g.started).toEqual(["a", "b"]); // c still waits for a
    await g.finish("a");
    expect(g.started).toEqual(["a", "b", "c"]);
    await g.finish("c");
    expect((await run).tables.map((t) => t.name)).toEqual(["a", "b", "c"]);
  });

  it("with concurrency 1, runs one node at a time in order", async () => {
    const g = gatedDb();
    const run = runModels(g.db, [sqlNode("a", "select 1"), sqlNode("b", "select 2")], 1);
    await g.settle();
    expect(g.started).toEqual(["a"]);
    await g.finish("a");
    expect(g.started).toEqual(["a", "b"]);
    await g.finish("b");
    await run;
  });

  it("runs one analytic at a time, with a SQL node beside it", async () => {
    const g = gatedDb();
    const run = runModels(g.db, [
      analyticNode("x", "select n from x_input"),
      analyticNode("y", "select n from y_input"),
      sqlNode("s", "select 3"),
    ]);
    await g.settle();
    expect(g.started).toEqual(["x", "s"]);
    await g.finish("s");
    expect(g.started).toEqual(["x", "s"]); // the free slot does not take the second analytic
    await g.finish("x");
    expect(g.started).toEqual(["x", "s", "y"]);
    await g.finish("y");
    expect((await run).tables.map((t) => t.name)).toEqual(["x", "y", "s"]);
  });

  it("on a failure, lets the node in flight finish, starts nothing more and names the failed model", async () => {
    const g = gatedDb();
    const run = runModels(g.db, [
      sqlNode("a", "select 1"),
      sqlNode("b", "select 2"),
      sqlNode("c", "select a", ["a"]),
      sqlNode("d", "select 4"),
    ]);
    const outcome = run.then(
      () => null,
      (err: unknown) => err,
    );
    await g.settle();
    await g.fail("a");
    expect(g.started).toEqual(["a", "b"]);
    let settled = false;
    void outcome.then(() => {
      settled = true;
    });
    await g.settle();
    expect(settled).toBe(false); // b is still running
    await g.finish("b");
    const err = await outcome;
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).model).toBe("a");
    expect((err as ModelError).message).toContain("a broke");
    expect(g.started).toEqual(["a", "b"]);
  });

  it("builds the same tables on a real database at concurrency 2 as at 1", async () => {
    const models = [
      sqlNode("base", "select range as n from range(5000)"),
      sqlNode("evens", "select n from base where n % 2 = 0", ["base"]),
      sqlNode("odds", "select n from base where n % 2 = 1", ["base"]),
      analyticNode("tens", "select n from evens order by n", ["evens"]),
      sqlNode("summary", "select (select sum(n) from tens) as t, (select count(*) from odds) as o", ["tens", "odds"]),
    ];
    const results = [];
    for (const concurrency of [1, 2]) {
      const db = await Db.open(":memory:", { threads: "1" });
      try {
        await db.exec("create table build_context as select 0 as as_of");
        const run = await runModels(db, models, concurrency);
        const [summary] = await db.all<{ t: string; o: string }>(
          "select t::varchar as t, o::varchar as o from summary",
        );
        results.push({ tables: run.tables, summary });
      } finally {
        db.close();
      }
    }
    // sum of 10·n over even n < 5000 = 10 · 2 · (0 + 1 + … + 2499) = 62,475,000; 2,500 odd n.
    expect(results[0].summary).toEqual({ t: "62475000", o: "2500" });
    expect(results[1]).toEqual(results[0]);
    expect(results[1].tables).toEqual([
      { name: "base", rows: 5000 },
      { name: "evens", rows: 2500 },
      { name: "odds", rows: 2500 },
      { name: "tens", rows: 2500 },
      { name: "summary", rows: 1 },
    ]);
  });
});
