import { describe, expect, it } from "vitest";
import { healthClock } from "./format.ts";
import { corruptStoredCheck, storageCheck } from "./storage.ts";

describe("published storage checks", () => {
  it("unreadable storage is a note measured on the wall clock, saying whether a build keeps serving", () => {
    const failure = { sinceMs: 1_000_000, error: "timeout" };
    const serving = storageCheck(failure, true, healthClock(50, 1_000 + 180));
    expect(serving.causes).toEqual([]);
    expect(serving.notes).toEqual([
      expect.stringMatching(
        /^published storage unreadable \(no effect on status\): timeout for 3 min\. The build in memory keeps serving/,
      ),
    ]);
    expect(storageCheck(failure, false, healthClock(1_180)).notes[0]).toContain(
      "Nothing can be served until the store answers.",
    );
    expect(storageCheck(null, true, healthClock(0)).notes).toEqual([]);
  });

  it("stored payloads failing their schema are named in a note", () => {
    expect(corruptStoredCheck(["snapshots/2025-09-01.json"]).notes[0]).toMatch(
      /^stored dated payloads fail their schema \(no effect on status\): snapshots\/2025-09-01\.json\./,
    );
    expect(corruptStoredCheck([]).notes).toEqual([]);
  });
});
