import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildOpenApi } from "../../api/openapi.ts";
import { ROUTES } from "../../api/routes/index.ts";
import { execFileSync } from "node:child_process";
import { importAllowed, importsOfFile } from "../helpers/import-graph.ts";

const ROOT = join(import.meta.dirname, "../..");
const trackedTs = (): string[] =>
  execFileSync("git", ["ls-files", "*.ts"], { cwd: ROOT, encoding: "utf8" })
    .split("\n")
    .filter((f) => f !== "");

describe("contracts", () => {
  it("committed api/openapi.json matches the route declarations (run `make openapi`)", () => {
    expect(JSON.parse(readFileSync(join(ROOT, "api/openapi.json"), "utf8"))).toEqual(
      JSON.parse(JSON.stringify(buildOpenApi())),
    );
  });

  it("every route declares an operationId, a summary and a lane; JSON routes a cache profile; keyed reads of published artifacts a budget; all documented", () => {
    const doc = buildOpenApi();
    const ids = new Set<string>();
    for (const r of ROUTES) {
      expect(r.summary.length).toBeGreaterThan(0);
      expect(ids.has(r.operationId), r.operationId).toBe(false);
      ids.add(r.operationId);
      expect(["public", "apiKey", "site", "signed-wallet", "webhook", "init-data", "admin"]).toContain(r.lane);
      if (r.kind === "json") {
        expect(r.cache).toBeTruthy();
        // a freshness budget on every keyed read, except immutable dated snapshots (a past day never goes stale)
        if (
          r.method === "GET" &&
          !r.notYetAvailable &&
          r.lane === "apiKey" &&
          r.cache !== "immutable-snapshot" &&
          r.cache !== "archive"
        )
          expect(r.artifact?.maxAgeSec ?? r.maxAgeSec, r.path).toBeGreaterThan(0);
      }
      const documented = doc.paths[r.path.replace(/:([A-Za-z]+)/g, "{$1}")] as
        | Record<string, { operationId: string }>
        | undefined;
      if (r.lane === "admin") expect(documented, r.path).toBeUndefined();
      else expect(documented?.[r.method.toLowerCase()]?.operationId, r.path).toBe(r.operationId);
    }
  });

  it("every OpenAPI tag an operation carries is declared with a description (the reference page groups by them)", () => {
    const doc = buildOpenApi() as {
      paths: Record<string, Record<string, { tags?: string[] }>>;
      tags: { name: string; description: string }[];
    };
    const used = new Set(Object.values(doc.paths).flatMap((p) => Object.values(p).flatMap((op) => op.tags ?? [])));
    const declared = new Map(doc.tags.map((t) => [t.name, t.description]));
    for (const t of used) expect(declared.get(t), t).toBeTruthy();
  });

  it("the OpenAPI description lints clean with @redocly/cli (recommended rules, 0 errors, 0 warnings)", () => {
    const out = execFileSync("npx", ["redocly", "lint", "--format", "json", "api/openapi.json"], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    const report = JSON.parse(out.slice(out.indexOf("{")));
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it("import boundaries: lib < pipelines < site-data < datasets < build, api over lib, site-data and datasets; nothing imports scripts/", () => {
    // Every static relative import (type-only ones too) of every tracked source file; test/, scripts/ and
    // the test files beside the code (api/**/*.test.ts) may import anything but are not imported.
    const upward = trackedTs()
      .filter((f) => !f.endsWith(".test.ts"))
      .flatMap((f) => importsOfFile(ROOT, f))
      .filter((e) => !importAllowed(e.from, e.to))
      .map((e) => `${e.from} → ${e.to}`);
    expect(upward).toEqual([]);
  });
});
