import { describe, expect, it } from "vitest";
import { buildOpenApi, documentedRoutes } from "../../api/openapi.ts";
import { declaredTags, declareTag } from "../../api/routes/tags.ts";

describe("OpenAPI tags declared beside their routes", () => {
  it("lists every tag a documented route uses, once, with a description, in order of first use", () => {
    const doc = buildOpenApi() as { tags: { name: string; description: string }[] };
    const used = [...new Set(documentedRoutes().map((r) => r.tag))];
    const names = doc.tags.map((t) => t.name);
    expect(names.slice(0, used.length)).toEqual(used);
    expect(new Set(names).size).toBe(names.length);
    for (const t of doc.tags) expect(t.description.length, t.name).toBeGreaterThan(0);
    expect(doc.tags.find((t) => t.name === "stablecoins")?.description).toBe(
      "Supply: the list, per-coin history and summary, aggregate charts.",
    );
  });

  it("a tag declared again must keep its description; a used tag nobody declared is an error", () => {
    expect(declareTag("test-tag-a", "One description.")).toBe("test-tag-a");
    expect(declareTag("test-tag-a", "One description.")).toBe("test-tag-a");
    expect(() => declareTag("test-tag-a", "Another description.")).toThrow(/declared twice/);
    expect(() => declaredTags(["test-tag-never-declared"])).toThrow(/test-tag-never-declared .*never declared/);
    expect(declaredTags(["test-tag-a"])[0]).toEqual({ name: "test-tag-a", description: "One description." });
  });
});
