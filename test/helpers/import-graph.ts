import { existsSync, readFileSync } from "node:fs";
import { join, normalize } from "node:path";
import ts from "typescript";

/**
 * One static import of a module: the importing and imported repository paths (`api/app.ts`), and
 * whether it is erased at run time (`import type …`, `export type … from`, or named bindings that are
 * all `type`).
 */
export interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
}

/**
 * The static relative imports and re-exports of one TypeScript text (`file` its repository path),
 * resolved against it: `import … from "./x.ts"`, `import "./x.ts"`, `export … from "./x.ts"`. Package
 * imports and dynamic `import()` calls are not listed (a dynamic import is not a load-time edge).
 */
export function importsOf(file: string, text: string): ImportEdge[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const out: ImportEdge[] = [];
  for (const st of src.statements) {
    let spec: ts.Expression | undefined;
    let typeOnly = false;
    if (ts.isImportDeclaration(st)) {
      spec = st.moduleSpecifier;
      const clause = st.importClause;
      const named = clause?.namedBindings;
      typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            named !== undefined &&
            ts.isNamedImports(named) &&
            named.elements.length > 0 &&
            named.elements.every((e) => e.isTypeOnly)));
    } else if (ts.isExportDeclaration(st) && st.moduleSpecifier) {
      spec = st.moduleSpecifier;
      const named = st.exportClause;
      typeOnly =
        st.isTypeOnly ||
        (named !== undefined &&
          ts.isNamedExports(named) &&
          named.elements.length > 0 &&
          named.elements.every((e) => e.isTypeOnly));
    }
    if (!spec || !ts.isStringLiteral(spec) || !spec.text.startsWith(".")) continue;
    out.push({ from: file, to: normalize(join(file, "..", spec.text)), typeOnly });
  }
  return out;
}

/**
 * Rank of each layer of the data side: a module may import its own layer and those below
 * (lib < pipelines < site-data < datasets < build).
 */
export const LAYER_RANK: Readonly<Record<string, number>> = {
  lib: 0,
  pipelines: 1,
  "site-data": 2,
  datasets: 3,
  build: 4,
};

/**
 * Whether a module (repository path, its first folder its layer) may import another: nothing imports
 * scripts/ but scripts and tests; test/ and scripts/ import anything; api/ imports api/, lib/, site-data/
 * and datasets/ (never pipelines/ or build/); a layer of LAYER_RANK imports its own and lower ones (so
 * build/ does not import api/); a file outside these folders imports nothing of the project.
 */
export function importAllowed(from: string, to: string): boolean {
  const [a, b] = [from.split("/")[0], to.split("/")[0]];
  if (b === "scripts") return a === "scripts" || a === "test";
  if (a === "test" || a === "scripts") return true;
  if (a === "api") return ["api", "lib", "site-data", "datasets"].includes(b);
  const [ra, rb] = [LAYER_RANK[a], LAYER_RANK[b]];
  return ra !== undefined && rb !== undefined && rb <= ra;
}

/** Reads the imports of `file` (repository path) under `root`. */
export function importsOfFile(root: string, file: string): ImportEdge[] {
  return importsOf(file, readFileSync(join(root, file), "utf8"));
}

/**
 * Every module reached from `entry` (repository path) by following static relative imports of `.ts`
 * modules (type-only imports included unless `runTimeOnly`), entry included, sorted.
 */
export function reachableFrom(root: string, entry: string, runTimeOnly = false): string[] {
  const seen = new Set<string>([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    for (const e of importsOfFile(root, file)) {
      if (runTimeOnly && e.typeOnly) continue;
      if (!e.to.endsWith(".ts") || seen.has(e.to) || !existsSync(join(root, e.to))) continue;
      seen.add(e.to);
      queue.push(e.to);
    }
  }
  return [...seen].sort();
}

/**
 * The import cycles among `files`: strongly connected components (Tarjan) of more than one module over
 * the given edges (edges to modules outside `files` are ignored); each component sorted, the list sorted
 * by its first module.
 */
export function importCycles(files: string[], edges: ImportEdge[]): string[][] {
  const inSet = new Set(files);
  const next = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const e of edges) if (inSet.has(e.from) && inSet.has(e.to)) next.get(e.from)?.push(e.to);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  let counter = 0;
  // iterative Tarjan: each frame is a node and the position in its successor list
  for (const start of files) {
    if (index.has(start)) continue;
    const frames: { node: string; i: number }[] = [{ node: start, i: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1];
      const succ = next.get(frame.node) ?? [];
      if (frame.i < succ.length) {
        const w = succ[frame.i++];
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          frames.push({ node: w, i: 0 });
        } else if (onStack.has(w)) {
          low.set(frame.node, Math.min(low.get(frame.node) ?? 0, index.get(w) ?? 0));
        }
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) ?? 0, low.get(frame.node) ?? 0));
      if (low.get(frame.node) === index.get(frame.node)) {
        const comp: string[] = [];
        let w: string | undefined;
        do {
          w = stack.pop() as string;
          onStack.delete(w);
          comp.push(w);
        } while (w !== frame.node);
        if (comp.length > 1) out.push(comp.sort());
      }
    }
  }
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}
