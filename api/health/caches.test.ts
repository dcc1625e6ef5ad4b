import { describe, expect, it } from "vitest";
import { cacheKeyOf, cachesCheck, orderedCaches, SPEC_CACHE_KEYS } from "./caches.ts";
import type { Producer } from "./jobs.ts";
import { manifestFile } from "../../test/helpers/manifest.ts";

// Spec 2.8: caches fresh ≤ 8× the route budget, degraded ≤ 12×, stale beyond (yield-data 2×/4×); the eight spec keys are always present.
const NOW = 1_757_203_200;
const build: Producer = { producerJob: "build", producerIntervalSec: null, lastSuccessAt: null };
const file = manifestFile;
const run = (files: ReturnType<typeof file>[], producer = build) =>
  cachesCheck({ buildId: "b", files }, NOW, () => producer);
const required = ["stablecoins", "stablecoin-charts", "stress-signals"].map((a) => file(a, 600, NOW));

describe("site-data caches check", () => {
  it("keys artifacts by their spec name: stress-signals is dews, yield-rankings is yield-data", () => {
    expect(cacheKeyOf("stress-signals")).toBe("dews");
    expect(cacheKeyOf("yield-rankings")).toBe("yield-data");
    expect(cacheKeyOf("peg-summary")).toBe("peg-summary");
  });

  it("8× the budget is fresh, just over is degraded, over 12× stale", () => {
    const at = (age: number) => run([...required, file("peg-summary", 100, NOW - age)]);
    expect(at(800).causes).toEqual([]);
    expect(at(801).causes).toEqual([expect.objectContaining({ code: "cache:peg-summary", status: "degraded" })]);
    expect(at(1201).causes).toEqual([expect.objectContaining({ code: "cache:peg-summary", status: "stale" })]);
    expect(at(1201).section["peg-summary"].healthy).toBe(false);
    expect(at(1201).statusWarnings[0]).toMatch(
      /^caches stale \(sets status stale\): peg-summary 20 min old \(budget 100 s\)/,
    );
  });

  it("unpublished optional spec keys are listed not-published without cause; a missing required one is stale", () => {
    const c = run(required);
    expect(c.causes).toEqual([]);
    expect(c.section["bluechip-ratings"]).toMatchObject({
      ageSeconds: null,
      healthy: false,
      sentinelValidationReason: "not-published",
    });
    const missing = run(required.slice(1));
    expect(missing.causes).toEqual([expect.objectContaining({ code: "cache:stablecoins", status: "stale" })]);
  });

  it("a file of unknown data time takes its age from the producer's last successful run (cron-fallback)", () => {
    const c = run([...required, file("peg-summary", 100, null)], {
      producerJob: "prices",
      producerIntervalSec: 600,
      lastSuccessAt: NOW - 50,
    });
    expect(c.section["peg-summary"]).toMatchObject({
      ageSeconds: 50,
      freshnessSource: "cron-fallback",
      producerJob: "prices",
    });
  });

  it("orders spec keys first in the spec's order, then the rest as found", () => {
    const c = run([file("peg-summary", 100, NOW), ...required]);
    const keys = Object.keys(orderedCaches({ ...c.section, "fx-rates": c.section.stablecoins }));
    expect(keys.slice(0, SPEC_CACHE_KEYS.length)).toEqual(SPEC_CACHE_KEYS.map(([k]) => k));
    expect(keys.at(-1)).toBe("peg-summary");
  });
});
