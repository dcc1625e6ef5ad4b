import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findDuplicateBlocks, type DuplicateBlock } from "../helpers/duplicate-blocks.ts";

// House rule (issue 32 item 6): no block of six or more identical lines may repeat between two
// source files, tests included. The scan reads every tracked *.ts and *.sql file, ignoring blank
// lines, comments, imports and lines of lone punctuation (a run of `});` is not a copy).

const ROOT = join(import.meta.dirname, "../..");

/**
 * File pairs that still share a block: none. A pair listed here that no longer shares a block fails
 * the second test, so the list only shrinks.
 */
const ALLOWED_PAIRS = new Set<string>([]);

const pairKey = (d: DuplicateBlock) => `${d.a.file} ~ ${d.b.file}`;

const scan = (() => {
  let cached: DuplicateBlock[] | undefined;
  return () => {
    if (!cached) {
      const files = execFileSync("git", ["ls-files", "*.ts", "*.sql"], { cwd: ROOT, encoding: "utf8" })
        .split("\n")
        .filter((f) => f !== "");
      cached = findDuplicateBlocks(files.map((file) => ({ file, text: readFileSync(join(ROOT, file), "utf8") })));
    }
    return cached;
  };
})();

describe("one declaration per concept", () => {
  it("no block of 6 identical lines repeats between two tracked source files (outside the allow-list)", () => {
    const found = scan()
      .filter((d) => !ALLOWED_PAIRS.has(pairKey(d)))
      .map((d) => `${d.a.file}:${d.a.line} ~ ${d.b.file}:${d.b.line}`);
    expect(found).toEqual([]);
  });

  it("every allowed pair still shares a block (remove the pairs that were fixed)", () => {
    const pairs = new Set(scan().map(pairKey));
    expect([...ALLOWED_PAIRS].filter((p) => !pairs.has(p))).toEqual([]);
  });
});

describe("findDuplicateBlocks", () => {
  const body = ["const a = 1;", "const b = 2;", "const c = 3;", "const d = 4;", "const e = 5;", "const f = 6;"];
  it("finds 6 identical lines in two files, whatever their indentation, and not 5", () => {
    const found = findDuplicateBlocks([
      { file: "x.ts", text: ["let q = 0;", ...body].join("\n") },
      { file: "y.ts", text: body.map((l) => `    ${l}`).join("\n") },
    ]);
    expect(found).toEqual([{ a: { file: "x.ts", line: 2 }, b: { file: "y.ts", line: 1 } }]);
    expect(
      findDuplicateBlocks([
        { file: "x.ts", text: body.slice(0, 5).join("\n") },
        { file: "y.ts", text: body.slice(0, 5).join("\n") },
      ]),
    ).toEqual([]);
  });

  it("skips blank lines, comments, imports and lone punctuation; a repeat inside one file is not a pair", () => {
    const padded = [
      'import {\n  a,\n  b,\n} from "./m.ts";',
      body[0],
      "",
      "// note",
      body[1],
      "/**\n * doc\n */",
      body[2],
      "});",
      ...body.slice(3),
    ].join("\n");
    expect(
      findDuplicateBlocks([
        { file: "x.ts", text: padded },
        { file: "y.sql", text: `-- view\n${body.join("\n")}` },
      ]),
    ).toEqual([{ a: { file: "x.ts", line: 5 }, b: { file: "y.sql", line: 2 } }]);
    expect(findDuplicateBlocks([{ file: "x.ts", text: [...body, "let z;", ...body].join("\n") }])).toEqual([]);
    const imports = ['import { a } from "./a.ts";', 'import { b } from "./b.ts";'];
    expect(
      findDuplicateBlocks([
        { file: "x.ts", text: [...imports, ...imports, ...imports].join("\n") },
        { file: "y.ts", text: [...imports, ...imports, ...imports].join("\n") },
      ]),
    ).toEqual([]);
  });
});
