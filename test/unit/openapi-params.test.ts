import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { boolParam, declaredParamType, intParam } from "../../api/lib/query-params.ts";
import { buildOpenApi } from "../../api/openapi.ts";
import { buildOperatorOpenApi } from "../../api/ops-openapi.ts";
import { buildPostmanCollection } from "../../api/postman.ts";
import { ROUTES } from "../../api/routes/index.ts";
import type { AdminRoute } from "../../api/routes/route.ts";

const ROOT = join(import.meta.dirname, "../..");

type Op = {
  operationId: string;
  parameters: { name: string; in: string; schema: Record<string, unknown> }[];
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
};

describe("parameter schemas come from the declarations", () => {
  it("intParam is an integer with its bounds, through .optional(), .default() and .describe()", () => {
    expect(declaredParamType(intParam(1, 500).optional().describe("Rows"))).toEqual({
      type: "integer",
      minimum: 1,
      maximum: 500,
    });
    expect(declaredParamType(intParam(0, 25).default(7).describe("Skip"))).toEqual({
      type: "integer",
      minimum: 0,
      maximum: 25,
      default: 7,
    });
    // the declaration still parses what it documents
    expect(intParam(0, 25).default(7).parse(undefined)).toBe(7);
    expect(intParam(0, 25).safeParse("26").success).toBe(false);
  });

  it("boolParam is a boolean with its default; a bare true/false enum is a boolean; enums and patterns stay", () => {
    expect(declaredParamType(boolParam(true).describe("x"))).toEqual({ type: "boolean", default: true });
    expect(declaredParamType(z.enum(["true", "false"]).optional())).toEqual({ type: "boolean" });
    expect(declaredParamType(z.enum(["asc", "desc"]).default("desc"))).toEqual({
      type: "string",
      enum: ["asc", "desc"],
      default: "desc",
    });
    expect(declaredParamType(z.string().regex(/^[A-Z]{3}$/))).toEqual({ type: "string", pattern: "^[A-Z]{3}$" });
  });

  it("no documented parameter is a bare string; limit/offset are integers and includeTotal a boolean", () => {
    const doc = buildOpenApi() as unknown as { paths: Record<string, Record<string, Op>> };
    const params = Object.values(doc.paths).flatMap((p) =>
      Object.values(p).flatMap((op) => op.parameters.map((x) => ({ op: op.operationId, ...x }))),
    );
    expect(params.length).toBeGreaterThan(60);
    for (const p of params) expect(p.schema, `${p.op} ${p.name}`).not.toEqual({ type: "string" });
    for (const p of params.filter((x) => x.in === "query" && ["limit", "offset", "days"].includes(x.name))) {
      expect(p.schema.type, `${p.op} ${p.name}`).toBe("integer");
      expect(typeof p.schema.minimum).toBe("number");
      expect(typeof p.schema.maximum).toBe("number");
    }
    for (const p of params.filter((x) => x.name === "includeTotal")) expect(p.schema.type).toBe("boolean");
  });

  it("every JSON response schema is a $ref to a named component, and shared shapes are components too", () => {
    const doc = buildOpenApi() as unknown as {
      paths: Record<string, Record<string, Op>>;
      components: { schemas: Record<string, unknown> };
    };
    const refs: string[] = [];
    for (const p of Object.values(doc.paths))
      for (const op of Object.values(p)) {
        const schema = op.responses["200"]?.content?.["application/json"]?.schema;
        if (schema) refs.push(String(schema.$ref));
      }
    expect(refs.length).toBeGreaterThan(30);
    for (const r of refs) expect(doc.components.schemas[r.replace("#/components/schemas/", "")], r).toBeDefined();
    // a component no route names directly is a shape shared by several responses, referenced from them
    const text = JSON.stringify(doc.components.schemas);
    const shared = Object.keys(doc.components.schemas).filter(
      (n) => n !== "Error" && !refs.includes(`#/components/schemas/${n}`),
    );
    expect(shared.length).toBeGreaterThan(0);
    for (const n of shared) expect(text.split(`"#/components/schemas/${n}"`).length - 1, n).toBeGreaterThanOrEqual(2);
  });

  it("the Postman collection carries the typed view: default as value, type and bounds in the description", () => {
    const c = buildPostmanCollection() as unknown as {
      item: {
        item: { name: string; request: { url: { query?: { key: string; value: string; description: string }[] } } }[];
      }[];
    };
    const depeg = c.item.flatMap((g) => g.item).find((i) => i.name === "GET /api/depeg-events");
    const limit = depeg?.request.url.query?.find((q) => q.key === "limit");
    expect(limit?.value).toBe("100");
    expect(limit?.description).toContain("(integer 1-1000, default 100)");
    const total = depeg?.request.url.query?.find((q) => q.key === "includeTotal");
    expect(total?.description).toContain("(boolean, default true)");
  });

  it("the operator description (typed parameters too) lints clean with @redocly/cli: 0 errors, 0 warnings", () => {
    const doc = buildOperatorOpenApi(ROUTES.filter((r): r is AdminRoute => r.kind === "admin")) as unknown as {
      paths: Record<string, Record<string, Op>>;
    };
    const batch = doc.paths["/api/backfill-supply-history"]?.post?.parameters.find((p) => p.name === "batchSize");
    expect(batch?.schema).toEqual({ type: "integer", minimum: 1, maximum: 100, default: 10 });
    const dir = mkdtempSync(join(tmpdir(), "ballast-ops-openapi-"));
    try {
      writeFileSync(join(dir, "ops.json"), JSON.stringify(doc));
      copyFileSync(join(ROOT, "redocly.yaml"), join(dir, "redocly.yaml"));
      const out = execFileSync(join(ROOT, "node_modules/.bin/redocly"), ["lint", "--format", "json", "ops.json"], {
        cwd: dir,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      });
      expect(JSON.parse(out.slice(out.indexOf("{"))).totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
