import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { buildOpenApi } from "../../api/openapi.ts";
import { ROUTES } from "../../api/routes.ts";

const ROOT = join(import.meta.dirname, "../..");
const tsFiles = (dir: string): string[] => readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile() && e.name.endsWith(".ts")).map((e) => relative(ROOT, join(e.parentPath, e.name)));
const imports = (file: string) => [...readFileSync(join(ROOT, file), "utf8").matchAll(/from\s+"(\.[^"]+)"/g)].map((m) => join(file, "..", m[1]));

describe("contracts", () => {
  it("committed api/openapi.json matches the route declarations (run `make openapi`)", () => {
    expect(JSON.parse(readFileSync(join(ROOT, "api/openapi.json"), "utf8"))).toEqual(JSON.parse(JSON.stringify(buildOpenApi())));
  });

  it("every route declares a summary, an auth class, a cache profile and a budget, and is documented", () => {
    const doc = buildOpenApi();
    for (const r of ROUTES) {
      expect(r.summary.length).toBeGreaterThan(0);
      expect(["apiKey", "public"]).toContain(r.auth);
      expect(r.cache).toBeTruthy();
      expect(r.maxAgeSec).toBeGreaterThan(0);
      expect(doc.paths[r.path.replace(/:([A-Za-z]+)/g, "{$1}")]).toBeTruthy();
    }
  });

  it("import boundaries: api never imports build/ or pipelines/; pipelines never import build/; nothing imports scripts/", () => {
    for (const f of tsFiles("api")) for (const i of imports(f)) expect(i, f).not.toMatch(/^(build|pipelines)\//);
    for (const f of tsFiles("pipelines")) for (const i of imports(f)) expect(i, f).not.toMatch(/^build\//);
    for (const dir of ["api", "build", "pipelines", "site-data", "datasets"]) {
      for (const f of tsFiles(dir)) for (const i of imports(f)) expect(i, f).not.toMatch(/^scripts\//);
    }
  });
});
