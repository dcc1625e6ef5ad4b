import { describe, expect, it } from "vitest";
import { inputQualityCheck } from "./input-quality.ts";

describe("input quality check", () => {
  it("reports dropped values, skipped reader rows, quality refusals and build notes as notes; zero counts are not reported", () => {
    const c = inputQualityCheck({
      sources: [
        { endpoint: "x.y", status: "ok", rows: 1, dropped: { bad: 2, nan: 1 }, newestObservedAt: 1, captures: [] },
        { endpoint: "x.z", status: "ok", rows: 1, dropped: { bad: 0 }, newestObservedAt: 1, captures: [] },
      ],
      readerDropped: { "f.csv": { short: 3 }, "g.csv": { short: 0 } },
      qualityRejections: { unknown_rule: { r: 1 }, peg_monitor: { zero: 0 } },
      warnings: ["a note"],
    });
    expect(c.causes).toEqual([]);
    expect(c.notes).toEqual([
      expect.stringContaining("x.y 3 (bad 2, nan 1)"),
      expect.stringContaining("f.csv 3 (short 3)"),
      "unknown_rule quality rules refused input (no effect on status): r 1; refused rows are left out of its outputs.",
      "build note (no effect on status): a note",
    ]);
  });
});
