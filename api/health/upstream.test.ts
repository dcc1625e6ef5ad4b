import { describe, expect, it } from "vitest";
import { upstreamCheck } from "./upstream.ts";

const AS_OF = 1_757_203_200;
const source = (endpoint: string, status: "ok" | "stale" | "missing", at: number | null) => ({
  endpoint,
  status,
  rows: 0,
  dropped: {},
  newestObservedAt: at,
  captures: [],
});

describe("upstream feeds check", () => {
  it("stale and missing feeds are notes without causes; current feeds are not mentioned", () => {
    const c = upstreamCheck({
      asOf: AS_OF,
      sources: [
        source("a.ok", "ok", AS_OF),
        source("b.old", "stale", AS_OF - 3 * 86400),
        source("c.none", "missing", null),
      ],
    });
    expect(c.causes).toEqual([]);
    expect(c.notes).toEqual([
      expect.stringContaining("b.old 2025-09-04T00:00Z (3 days before as-of)"),
      expect.stringContaining("without any capture at or before as-of (no effect on status): c.none."),
    ]);
    expect(c.notes.join()).not.toContain("a.ok");
  });
});
