import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { Analytic } from "../pipelines/analytics/contract.ts";
import type { Db } from "./duckdb.ts";
import { must } from "../lib/must.ts";

/**
 * One DAG node: a SQL model `pipelines/models/<layer>/<name>.sql` (plus optional
 * `<name>.assert.sql`), or a TS analytic (layer `intermediate` unless it declares `marts`) writing `outputs`.
 */
export interface Model {
  name: string;
  layer: "staging" | "intermediate" | "marts";
  sql: string;
  asserts: { label: string; sql: string }[];
  deps: string[];
  /** Tables the node creates: `[name]` for SQL models. */
  outputs: string[];
  analytic?: Analytic;
}

/** Result of running the DAG: rows per created table and quality rejections per analytic. */
export interface ModelRunResult {
  tables: { name: string; rows: number }[];
  rejected: Record<string, Record<string, number>>;
  /** Wall time per node (ms); not published (builds stay byte-reproducible). */
  timings: Record<string, number>;
}

const LAYERS = ["staging", "intermediate", "marts"] as const;

/** Thrown when a model fails to run or an assert returns rows; names the model and assert. */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly model: string,
    readonly assert?: string,
  ) {
    super(message);
    this.name = "ModelError";
  }
}

/** Splits an assert file into its `-- assert: <label>` queries. */
export function parseAsserts(text: string): { label: string; sql: string }[] {
  return text
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((sql) => {
      const m = /--\s*assert:\s*(.*)/.exec(sql);
      return { label: m ? m[1].trim() : "unnamed assert", sql };
    });
}

/** Asserts of node `name` (`<dir>/<name>.assert.sql`, SQL model or TS analytic); none when the file is missing. */
function assertsOf(dir: string, name: string): Model["asserts"] {
  try {
    return parseAsserts(readFileSync(join(dir, `${name}.assert.sql`), "utf8"));
  } catch {
    return [];
  }
}

/** SQL model files of `dir` (`*.sql` but not `*.assert.sql`) matching `prefix`, each with its folder. */
function sqlFiles(dir: string, prefix = ""): { dir: string; file: string }[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith(prefix) && f.endsWith(".sql") && !f.endsWith(".assert.sql"))
    .map((file) => ({ dir, file }));
}

/**
 * Staging models of the source folders under `sourcesDir` (`<sourcesDir>/<source>/stg_*.sql`, the
 * folders sources.ts discovers: names not starting with `_` or `.`); none when the folder is missing.
 */
function sourceStagingFiles(sourcesDir: string): { dir: string; file: string }[] {
  if (!existsSync(sourcesDir)) return [];
  return readdirSync(sourcesDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith("_") && !e.name.startsWith("."))
    .flatMap((e) => sqlFiles(join(sourcesDir, e.name), "stg_"));
}

/**
 * Discovers SQL models (`<root>/<layer>/*.sql`, plus the staging models each source keeps beside its
 * declaration: `<sourcesDir>/<source>/stg_<source>__<entity>.sql`, by default `pipelines/sources/`
 * beside `root`), adds the TS `analytics` (each with its `<layer>/<name>.assert.sql` when present), and
 * orders them so every node runs after the nodes whose tables it reads. A model's name is its file name
 * whichever folder holds it; models of a layer are taken in name order. Throws ModelError on cycles,
 * reads from a later layer or two models of one name.
 */
export function discoverModels(
  root: string,
  analytics: Analytic[] = [],
  sourcesDir: string = join(root, "..", "sources"),
): Model[] {
  const models: Model[] = [];
  for (const layer of LAYERS) {
    const files = [...sqlFiles(join(root, layer)), ...(layer === "staging" ? sourceStagingFiles(sourcesDir) : [])].sort(
      (a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0),
    );
    for (const { dir, file } of files) {
      const name = basename(file, ".sql");
      models.push({
        name,
        layer,
        sql: readFileSync(join(dir, file), "utf8"),
        asserts: assertsOf(dir, name),
        deps: [],
        outputs: [name],
      });
    }
  }
  for (const a of analytics) {
    const layer = a.layer ?? "intermediate";
    models.push({
      name: a.name,
      layer,
      sql: Object.values(a.inputs).join("\n"),
      asserts: assertsOf(join(root, layer), a.name),
      deps: [],
      outputs: Object.keys(a.outputs),
      analytic: a,
    });
  }
  // table name → node that creates it
  const producer = new Map<string, string>();
  for (const m of models)
    for (const o of m.outputs) {
      if (producer.has(o))
        throw new ModelError(`table ${o} is created by both ${producer.get(o)} and ${m.name}`, m.name);
      producer.set(o, m.name);
    }
  const layerRank = new Map(models.map((m) => [m.name, LAYERS.indexOf(m.layer)]));
  for (const m of models) {
    const body = m.sql.replace(/--.*$/gm, "");
    m.deps = [
      ...new Set(
        [...body.matchAll(/\b([a-z_][a-z0-9_]*)\b/g)]
          .map((x) => producer.get(x[1]))
          .filter((d): d is string => d !== undefined),
      ),
    ]
      .filter((id) => id !== m.name)
      .sort();
    for (const d of m.deps) {
      if (must(layerRank.get(d), `layer of model ${d}`) > LAYERS.indexOf(m.layer))
        throw new ModelError(`${m.name} reads ${d} from a later layer`, m.name);
    }
  }
  const ordered: Model[] = [];
  const state = new Map<string, "visiting" | "done">();
  const byName = new Map(models.map((m) => [m.name, m]));
  const visit = (m: Model, path: string[]) => {
    if (state.get(m.name) === "done") return;
    if (state.get(m.name) === "visiting")
      throw new ModelError(`dependency cycle: ${[...path, m.name].join(" → ")}`, m.name);
    state.set(m.name, "visiting");
    for (const d of m.deps) visit(must(byName.get(d), `model ${d}`), [...path, m.name]);
    state.set(m.name, "done");
    ordered.push(m);
  };
  for (const m of models) visit(m, []);
  return ordered;
}

/** Runs one TS analytic: reads its inputs, runs it, writes its output tables. */
async function runAnalytic(db: Db, a: Analytic, asOf: number): Promise<Record<string, number> | undefined> {
  const inputs: Record<string, Record<string, unknown>[]> = {};
  for (const [k, sql] of Object.entries(a.inputs)) inputs[k] = await db.all(sql);
  const { tables, rejected } = a.run(inputs, { asOf });
  for (const [table, columns] of Object.entries(a.outputs)) {
    if (!tables[table]) throw new Error(`analytic ${a.name} did not produce ${table}`);
    await db.loadRows(table, columns, tables[table]);
  }
  return rejected;
}

/**
 * Nodes of the DAG in flight at once in runModels, each on a DuckDB connection of its own. DuckDB runs
 * each query on one thread (the build database has `threads` 1) and an analytic computes on the main
 * thread, so a SQL model runs while an analytic computes, or two SQL models run side by side (2 cores).
 * Outputs do not depend on it: a node starts only once every node it reads has finished (its tables
 * committed), and each query runs as it would alone.
 */
export const MODEL_CONCURRENCY = 2;

/**
 * Runs every node (SQL model as a table, TS analytic into its output tables), up to `concurrency` at once
 * (MODEL_CONCURRENCY; at most one analytic at a time: analytics share the main thread, and two would
 * hold two inputs in memory), in `models` order as their dependencies finish; then every assert.
 * A dependency that is not in `models` is taken as already built. `tables` and `rejected` list tables
 * and analytics in `models` order. Throws ModelError naming the failing model (the first to fail; nodes in flight finish
 * first, none starts after it) or assert.
 */
export async function runModels(db: Db, models: Model[], concurrency = MODEL_CONCURRENCY): Promise<ModelRunResult> {
  const out: ModelRunResult = { tables: [], rejected: {}, timings: {} };
  const [{ as_of: asOf }] = models.some((m) => m.analytic)
    ? await db.all<{ as_of: number }>("select as_of::integer as as_of from build_context")
    : [{ as_of: 0 }];
  const inRun = new Set(models.map((m) => m.name));
  const done = new Set<string>();
  const rowsOf = new Map<string, ModelRunResult["tables"]>();
  const rejectedOf = new Map<string, Record<string, number>>();
  const runNode = async (m: Model, conn: Db) => {
    const t0 = performance.now();
    try {
      if (m.analytic) {
        const rejected = await runAnalytic(conn, m.analytic, asOf);
        if (rejected && Object.keys(rejected).length) rejectedOf.set(m.name, rejected);
      } else {
        await conn.exec(`create or replace table ${m.name} as ${m.sql.trim().replace(/;\s*$/, "")}`);
      }
    } catch (err) {
      throw new ModelError(`model ${m.name} failed: ${(err as Error).message}`, m.name);
    }
    out.timings[m.name] = performance.now() - t0;
    const tables: ModelRunResult["tables"] = [];
    for (const t of m.outputs) {
      const [{ n }] = await conn.all<{ n: number }>(`select count(*)::integer as n from ${t}`);
      tables.push({ name: t, rows: n });
    }
    rowsOf.set(m.name, tables);
  };
  const extra = await Promise.all(Array.from({ length: Math.max(0, concurrency - 1) }, () => db.connect()));
  const free = [db, ...extra];
  const pending = [...models];
  const running = new Set<Promise<void>>();
  let analyticRunning = false;
  let failure: unknown;
  try {
    while (failure === undefined && (pending.length || running.size)) {
      for (;;) {
        const i = pending.findIndex(
          (m) => !(m.analytic && analyticRunning) && m.deps.every((d) => !inRun.has(d) || done.has(d)),
        );
        const conn = i >= 0 ? free.pop() : undefined;
        if (!conn) break;
        const [m] = pending.splice(i, 1);
        if (m.analytic) analyticRunning = true;
        const node: Promise<void> = runNode(m, conn)
          .then(
            () => void done.add(m.name),
            (err) => {
              failure ??= err;
            },
          )
          .finally(() => {
            if (m.analytic) analyticRunning = false;
            free.push(conn);
            running.delete(node);
          });
        running.add(node);
      }
      if (!running.size) break; // nothing ready and nothing running: a dependency cycle (discoverModels refuses them)
      await Promise.race(running);
    }
    await Promise.allSettled(running);
  } finally {
    for (const c of extra) c.close();
  }
  if (failure !== undefined) throw failure;
  const notRun = pending.map((m) => m.name);
  if (notRun.length) throw new ModelError(`models never ready (dependency cycle): ${notRun.join(", ")}`, notRun[0]);
  // In `models` order whatever order the nodes finished in: the manifest lists both.
  for (const m of models) {
    out.tables.push(...(rowsOf.get(m.name) ?? []));
    const rejected = rejectedOf.get(m.name);
    if (rejected) out.rejected[m.name] = rejected;
  }
  // Asserts run once every model exists, so they may compare models with each other.
  for (const m of models) {
    for (const a of m.asserts) {
      const rows = await db.all(a.sql);
      if (rows.length > 0) {
        throw new ModelError(
          `assert failed on ${m.name}: ${a.label} (${rows.length} rows, first: ${JSON.stringify(rows[0])})`,
          m.name,
          a.label,
        );
      }
    }
  }
  return out;
}
