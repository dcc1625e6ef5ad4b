import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
/** Longest function body allowed in api/ (lines, first to last line of the function node). */
const MAX_LINES = 120;

/** Source files under `dir` (recursive), tests excluded. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [path] : [];
  });
}

/** Name of a function node for the report: its declared name, its variable or property, else `<anonymous>`. */
function nameOf(node: ts.FunctionLikeDeclaration): string {
  if (node.name) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText();
  return "<anonymous>";
}

/** Every function (declaration, method, accessor, constructor, arrow or expression) of `file` longer than `max` lines, as `file:line name (n lines)`. */
function longFunctions(file: string, source: string, max = MAX_LINES): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const fn = node as ts.FunctionLikeDeclaration;
      const first = sf.getLineAndCharacterOfPosition(fn.getStart(sf)).line + 1;
      const last = sf.getLineAndCharacterOfPosition(fn.getEnd()).line + 1;
      if (last - first + 1 > max) out.push(`${file}:${first} ${nameOf(fn)} (${last - first + 1} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

describe("function size (issue 32)", () => {
  it("measures what it claims: a 121-line function is long, a 120-line one is not", () => {
    const fn = (lines: number) => `function f() {\n${"  x();\n".repeat(lines - 2)}}\n`;
    expect(longFunctions("a.ts", fn(121))).toEqual(["a.ts:1 f (121 lines)"]);
    expect(longFunctions("a.ts", fn(120))).toEqual([]);
    expect(longFunctions("a.ts", `const g = () => {\n${"  x();\n".repeat(130)}};\n`)).toEqual(["a.ts:1 g (132 lines)"]);
  });

  it("finds the source files of api/ it checks (tests excluded)", () => {
    const files = sourceFiles("api");
    expect(files).toContain(join("api", "server.ts"));
    expect(files).toContain(join("api", "lib", "telegram", "bot.ts"));
    expect(files.filter((f) => f.endsWith(".test.ts"))).toEqual([]);
  });

  const long = sourceFiles("api").flatMap((f) =>
    longFunctions(relative(ROOT, join(ROOT, f)), readFileSync(join(ROOT, f), "utf8")),
  );

  it("no function in api/ is over 120 lines (no exceptions)", () => {
    expect(long).toEqual([]);
  });
});
