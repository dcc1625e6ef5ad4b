import { describe, expect, it } from "vitest";
import { coverageCheck } from "./coverage.ts";

// Spec 2.9: publication coverage degrades /api/health but is not a public-impact cause.
const AS_OF = 1_757_203_200;
const list = (status: "ok" | "stale" | "missing", at: number | null) => ({
  endpoint: "defillama.stablecoins",
  status,
  rows: 1,
  dropped: {},
  newestObservedAt: at,
  captures: [],
});

describe("publication coverage check", () => {
  it("a current list snapshot and no skipped capture: nothing to report", () => {
    const c = coverageCheck({ asOf: AS_OF, sources: [list("ok", AS_OF)], skippedCaptures: [] });
    expect([c.causes, c.statusWarnings, c.notes]).toEqual([[], [], []]);
  });

  it("a stale or missing list snapshot degrades, without public impact", () => {
    const stale = coverageCheck({ asOf: AS_OF, sources: [list("stale", AS_OF - 3 * 86400)], skippedCaptures: [] });
    expect(stale.causes).toEqual([
      {
        code: "publication-coverage:list-snapshot",
        status: "degraded",
        publicImpact: false,
        detail: "stablecoin list snapshot stale at as-of",
      },
    ]);
    expect(stale.statusWarnings[0]).toContain("3 days before as-of");
    const missing = coverageCheck({ asOf: AS_OF, sources: [list("missing", null)], skippedCaptures: [] });
    expect(missing.causes[0].detail).toBe("stablecoin list snapshot missing at as-of");
  });

  it("empty recorded captures skipped by the build degrade, naming file, endpoint and reason", () => {
    const c = coverageCheck({
      asOf: AS_OF,
      sources: [],
      skippedCaptures: [{ file: "x/y.csv", endpoint: "coingecko.market_chart", reason: "header-only" }],
    });
    expect(c.causes.map((x) => [x.code, x.status])).toEqual([["publication-coverage:skipped-captures", "degraded"]]);
    expect(c.statusWarnings[0]).toContain("x/y.csv (coingecko.market_chart, header-only)");
  });
});
