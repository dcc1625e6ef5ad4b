import { describe, expect, it } from "vitest";
import { causePublicImpact, causesOf, worstStatus } from "./causes.ts";

// Spec 2.9: public-impact cause families; publication coverage and unknown families have none.
describe("causes", () => {
  it("public impact by family", () => {
    expect(causePublicImpact("cache:stablecoins")).toBe(true);
    expect(causePublicImpact("cron-error:prices")).toBe(true);
    expect(causePublicImpact("publication-coverage:list-snapshot")).toBe(false);
    expect(causePublicImpact("something-else")).toBe(false);
  });

  it("a healthy impact adds no cause; the status is the worst cause", () => {
    expect(causesOf("healthy", "cache:x", "fine")).toEqual([]);
    const causes = [...causesOf("degraded", "db-unhealthy", "a"), ...causesOf("stale", "no-build", "b")];
    expect(worstStatus(causes)).toBe("stale");
    expect(worstStatus(causes.slice(0, 1))).toBe("degraded");
    expect(worstStatus([])).toBe("healthy");
  });
});
