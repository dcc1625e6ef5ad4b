import { describe, expect, it } from "vitest";
import { notYetAvailableCheck } from "./not-yet-available.ts";

describe("not yet available check", () => {
  it("asks the route table with the build's file paths and names each feature's 503 routes", () => {
    const asked: string[][] = [];
    const table = (published: ReadonlySet<string>) => {
      asked.push([...published]);
      return { "og-images": ["/api/og/depeg"], yields: ["/api/yields", "/api/yield-history"] };
    };
    const c = notYetAvailableCheck({ files: [{ path: "site-data/a.json" }] as never }, table);
    expect(asked).toEqual([["site-data/a.json"]]);
    expect(c.causes).toEqual([]);
    expect(c.notes).toEqual([
      "not yet available (no effect on status): og-images — no build publishes it yet; /api/og/depeg answers 503 `Data not yet available: og-images`.",
      "not yet available (no effect on status): yields — no build publishes it yet; /api/yields, /api/yield-history answer 503 `Data not yet available: yields`.",
    ]);
  });

  it("without the route table's view nothing is reported", () => {
    expect(notYetAvailableCheck({ files: [] }, undefined).notes).toEqual([]);
  });
});
