import { describe, expect, it } from "vitest";
import { healthClock } from "./format.ts";
import { statusHistoryCheck } from "./status-history.ts";

const recorder = (state: "ok" | "unavailable") => ({
  state,
  lastError: state === "ok" ? null : "status history: timeout",
  lastRecordedAt: 1000,
  pendingObservations: state === "ok" ? 0 : 4,
  intervalSec: 60,
});

describe("status history recorder check", () => {
  it("a working recorder is echoed (times shifted), without a note", () => {
    const c = statusHistoryCheck(recorder("ok"), healthClock(500, 1500));
    expect(c.section?.lastRecordedAt).toBe(0);
    expect(c.notes).toEqual([]);
  });

  it("failing writes are a note, never a cause", () => {
    const c = statusHistoryCheck(recorder("unavailable"), healthClock(1600));
    expect(c.causes).toEqual([]);
    expect(c.statusWarnings).toEqual([]);
    expect(c.notes).toEqual([
      expect.stringContaining(
        "status history recording failing (no effect on status): status history: timeout; 4 observation(s) kept in memory",
      ),
    ]);
    expect(c.notes[0]).toContain("(10 min before now)");
  });
});
