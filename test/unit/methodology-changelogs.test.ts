import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { changelogPathOf, METHODOLOGY_CHANGELOGS } from "../../pipelines/analytics/changelogs.ts";
import { methodology } from "../../site-data/peg-summary.ts";
import { must } from "../helpers/must.ts";

const ROOT = join(import.meta.dirname, "../..");
const CHANGELOG_DIR = join(ROOT, "pipelines/analytics/changelogs");
/** A methodology version id as the code writes it: `ballast-<name>-v<n>` or `readiness-<window>-v<n>`. */
const VERSION_ID = /\b(?:ballast-[a-z0-9-]+?-v\d+|readiness-\d+h-v\d+)\b/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const rel = join(dir, name);
    if (statSync(join(ROOT, rel)).isDirectory()) return name === "node_modules" ? [] : sourceFiles(rel);
    return /\.(ts|sql)$/.test(name) ? [rel] : [];
  });
}

/** Every version id written in the code (the changelog index itself excluded: it also lists past versions). */
function versionIdsInCode(): Map<string, string[]> {
  const ids = new Map<string, string[]>();
  for (const f of ["api", "build", "datasets", "pipelines", "site-data"].flatMap(sourceFiles)) {
    if (f === relative(ROOT, join(ROOT, "pipelines/analytics/changelogs.ts"))) continue;
    for (const m of readFileSync(join(ROOT, f), "utf8").matchAll(VERSION_ID))
      ids.set(m[0], [...(ids.get(m[0]) ?? []), f]);
  }
  return ids;
}

const currentIn = (text: string) => [...text.matchAll(/^\*\*Current version:\*\* `([^`]+)`/gm)].map((m) => m[1]);

describe("methodology changelogs", () => {
  const inCode = versionIdsInCode();

  it("finds the methodology versions the code publishes", () => {
    expect([...inCode.keys()].sort()).toEqual(
      expect.arrayContaining([
        "ballast-depeg-v4",
        "ballast-peg-score-v3",
        "ballast-price-consensus-v3",
        "ballast-lineage-check-v1",
        "ballast-resolver-v1",
        "readiness-72h-v1",
      ]),
    );
  });

  it("every version id used in code has a changelog that exists and names it as the current version", () => {
    for (const [id, files] of inCode) {
      const c = METHODOLOGY_CHANGELOGS.find((x) => x.versionId === id);
      expect(c, `${id} (used in ${files.join(", ")}) has no changelog entry`).toBeDefined();
      const { file } = must(c, `the changelog entry of ${id}`);
      expect(existsSync(file), file).toBe(true);
      const text = readFileSync(file, "utf8");
      expect(currentIn(text), `${file} names ${id} as current`).toContain(id);
      expect(text, `${file} has a dated section for ${id}`).toMatch(
        new RegExp(`^## .*${id}.* — \\d{4}-\\d{2}-\\d{2}`, "m"),
      );
    }
  });

  it("changelogPath is /methodology/<analytic>.md and resolves to the changelog file", () => {
    for (const c of METHODOLOGY_CHANGELOGS) {
      expect(c.path).toBe(`/methodology/${c.analytic}.md`);
      expect(changelogPathOf(c.versionId)).toBe(c.path);
      expect(join(CHANGELOG_DIR, basename(c.path))).toBe(c.file);
      expect(methodology(c.versionId, "label", 0)).toMatchObject({
        version: c.versionId,
        changelogPath: c.path,
        isCurrent: true,
      });
    }
  });

  it("earlier versions resolve to the same changelog and have their own dated section; unknown ids throw", () => {
    for (const c of METHODOLOGY_CHANGELOGS) {
      for (const old of c.previousVersionIds) {
        expect(changelogPathOf(old)).toBe(c.path);
        expect(readFileSync(c.file, "utf8")).toMatch(new RegExp(`^## .*${old}.* — \\d{4}-\\d{2}-\\d{2}`, "m"));
      }
    }
    expect(() => changelogPathOf("ballast-unknown-v9")).toThrow(/ballast-unknown-v9/);
  });

  it("every changelog file is indexed, and names exactly the current versions the index gives it", () => {
    const files = readdirSync(CHANGELOG_DIR)
      .filter((f) => f.endsWith(".md"))
      .map((f) => join(CHANGELOG_DIR, f))
      .sort();
    expect([...new Set(METHODOLOGY_CHANGELOGS.map((c) => c.file))].sort()).toEqual(files);
    for (const f of files) {
      expect(currentIn(readFileSync(f, "utf8")).sort()).toEqual(
        METHODOLOGY_CHANGELOGS.filter((c) => c.file === f)
          .map((c) => c.versionId)
          .sort(),
      );
      expect(dirname(f)).toBe(CHANGELOG_DIR);
    }
  });
});
