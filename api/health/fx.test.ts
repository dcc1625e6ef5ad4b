import { describe, expect, it } from "vitest";
import { fxCheck, fxSourceStatus } from "./fx.ts";

// Spec 3.2 / 2.8: ECB rates have their own cadence: fresh up to 4 days, degraded up to 8, stale beyond, none without any.
const NOW = 1_757_203_200;
const DAY = 86400;
const producer = { producerJob: "build", producerIntervalSec: null };
const withFx = (at: number | null) => ({
  sources: [
    {
      endpoint: "frankfurter.rates",
      status: "ok" as const,
      rows: 1,
      dropped: {},
      newestObservedAt: at,
      captures: [],
    },
  ],
});

describe("fx-rates check", () => {
  it("judges the age of the newest ECB observation on its own cadence", () => {
    expect(fxSourceStatus(4 * DAY)).toBe("fresh");
    expect(fxSourceStatus(4 * DAY + 1)).toBe("degraded");
    expect(fxSourceStatus(8 * DAY + 1)).toBe("stale");
    expect(fxSourceStatus(null)).toBe("none");
  });

  it("a fresh rate is a live, healthy cache without cause or warning", () => {
    const c = fxCheck(withFx(NOW - DAY), NOW, producer);
    expect(c.section).toMatchObject({
      ageSeconds: DAY,
      healthy: true,
      mode: "live",
      sourceStatus: "fresh",
      warning: null,
    });
    expect(c.causes).toEqual([]);
    expect(c.statusWarnings).toEqual([]);
  });

  it("a 6-day-old rate degrades, a 9-day-old one and a missing one make the status stale (cause fx-cached-fallback)", () => {
    const degraded = fxCheck(withFx(NOW - 6 * DAY), NOW, producer);
    expect(degraded.section).toMatchObject({ healthy: true, mode: "cached-fallback", sourceStatus: "degraded" });
    expect(degraded.causes).toEqual([
      expect.objectContaining({ code: "fx-cached-fallback", status: "degraded", publicImpact: true }),
    ]);
    expect(degraded.statusWarnings[0]).toMatch(/^fx-rates cache degraded \(sets status degraded\)/);
    const stale = fxCheck(withFx(NOW - 9 * DAY), NOW, producer);
    expect(stale.causes.map((c) => c.status)).toEqual(["stale"]);
    expect(stale.section.healthy).toBe(false);
    const none = fxCheck({ sources: [] }, NOW, producer);
    expect(none.section).toMatchObject({ ageSeconds: null, sourceStatus: "none", healthy: false });
    expect(none.causes.map((c) => c.status)).toEqual(["stale"]);
    expect(none.statusWarnings[0]).toContain("no ECB reference rate has been observed");
  });
});
