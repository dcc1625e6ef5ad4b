import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { Db } from "./duckdb.ts";

/** One SQL model: `pipelines/models/<layer>/<name>.sql`, plus optional `<name>.assert.sql`. */
export interface Model {
  name: string;
  layer: "staging" | "intermediate" | "marts";
  sql: string;
  asserts: { label: string; sql: string }[];
  deps: string[];
}

const LAYERS = ["staging", "intermediate", "marts"] as const;

/** Thrown when a model fails to run or an assert returns rows; names the model and assert. */
export class ModelError extends Error {
  constructor(message: string, readonly model: string, readonly assert?: string) {
    super(message);
    this.name = "ModelError";
  }
}

/** Splits an assert file into its `-- assert: <label>` queries. */
export function parseAsserts(text: string): { label: string; sql: string }[] {
  return text.split(/;\s*(?:\n|$)/).map((s) => s.trim()).filter(Boolean).map((sql) => {
    const m = /--\s*assert:\s*(.*)/.exec(sql);
    return { label: m ? m[1].trim() : "unnamed assert", sql };
  });
}

/** Discovers models and orders them so every model runs after the models it reads. Throws on cycles. */
export function discoverModels(root: string): Model[] {
  const models: Model[] = [];
  for (const layer of LAYERS) {
    for (const file of readdirSync(join(root, layer)).filter((f) => f.endsWith(".sql") && !f.endsWith(".assert.sql")).sort()) {
      const name = basename(file, ".sql");
      const assertPath = join(root, layer, `${name}.assert.sql`);
      let asserts: Model["asserts"] = [];
      try { asserts = parseAsserts(readFileSync(assertPath, "utf8")); } catch { /* no asserts */ }
      models.push({ name, layer, sql: readFileSync(join(root, layer, file), "utf8"), asserts, deps: [] });
    }
  }
  const names = new Set(models.map((m) => m.name));
  const layerRank = new Map(models.map((m) => [m.name, LAYERS.indexOf(m.layer)]));
  for (const m of models) {
    const body = m.sql.replace(/--.*$/gm, "");
    m.deps = [...new Set([...body.matchAll(/\b([a-z_][a-z0-9_]*)\b/g)].map((x) => x[1]))]
      .filter((id) => id !== m.name && names.has(id)).sort();
    for (const d of m.deps) {
      if (layerRank.get(d)! > LAYERS.indexOf(m.layer)) throw new ModelError(`${m.name} reads ${d} from a later layer`, m.name);
    }
  }
  const ordered: Model[] = [];
  const state = new Map<string, "visiting" | "done">();
  const byName = new Map(models.map((m) => [m.name, m]));
  const visit = (m: Model, path: string[]) => {
    if (state.get(m.name) === "done") return;
    if (state.get(m.name) === "visiting") throw new ModelError(`dependency cycle: ${[...path, m.name].join(" → ")}`, m.name);
    state.set(m.name, "visiting");
    for (const d of m.deps) visit(byName.get(d)!, [...path, m.name]);
    state.set(m.name, "done");
    ordered.push(m);
  };
  for (const m of models) visit(m, []);
  return ordered;
}

/** Runs every model as a table, then every assert. Throws ModelError naming the failing model/assert. */
export async function runModels(db: Db, models: Model[]): Promise<{ name: string; rows: number }[]> {
  const out: { name: string; rows: number }[] = [];
  for (const m of models) {
    try {
      await db.exec(`create or replace table ${m.name} as ${m.sql.trim().replace(/;\s*$/, "")}`);
    } catch (err) {
      throw new ModelError(`model ${m.name} failed: ${(err as Error).message}`, m.name);
    }
    const [{ n }] = await db.all<{ n: number }>(`select count(*)::integer as n from ${m.name}`);
    out.push({ name: m.name, rows: n });
  }
  // Asserts run once every model exists, so they may compare models with each other.
  for (const m of models) {
    for (const a of m.asserts) {
      const rows = await db.all(a.sql);
      if (rows.length > 0) {
        throw new ModelError(`assert failed on ${m.name}: ${a.label} (${rows.length} rows, first: ${JSON.stringify(rows[0])})`, m.name, a.label);
      }
    }
  }
  return out;
}
