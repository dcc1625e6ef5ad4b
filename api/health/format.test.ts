import { describe, expect, it } from "vitest";
import { age, counts, healthClock, isoMinute, sum } from "./format.ts";

describe("health formatting", () => {
  it("ages in s below 2 min, min below 2 h, h below 2 days, else days (floored)", () => {
    expect([age(119), age(120), age(7199), age(7200), age(2 * 86400 - 1), age(2 * 86400)]).toEqual([
      "119 s",
      "2 min",
      "119 min",
      "2 h",
      "47 h",
      "2 days",
    ]);
  });

  it("minutes in ISO UTC, reason counts sorted, sums", () => {
    expect(isoMinute(1_757_203_259)).toBe("2025-09-07T00:00Z");
    expect(counts({ b: 1, a: 2 })).toBe("a 2, b 1");
    expect(sum({ a: 2, b: 3 })).toBe(5);
  });

  it("shifts wall-clock times onto the clock in force", () => {
    const c = healthClock(100, 1100);
    expect([c.onClockAt(1000), c.onClock(null), c.wallNow]).toEqual([0, null, 1100]);
    expect(healthClock(5).wallNow).toBe(5);
  });
});
