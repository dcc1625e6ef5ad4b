import { describe, expect, it } from "vitest";
import { noBuildCheck, pointerCheck } from "./build.ts";
import { healthClock } from "./format.ts";

describe("build and pointer checks", () => {
  it("no published build: stale, public cause no-build", () => {
    const c = noBuildCheck();
    expect(c.causes).toEqual([
      {
        code: "no-build",
        status: "stale",
        publicImpact: true,
        detail: "no published build: every data route answers 503",
      },
    ]);
    expect(c.notes[0]).toMatch(/^no published build/);
  });

  it("an unreadable pointer is a note naming the build that keeps serving and how to restore it", () => {
    const c = pointerCheck({ sinceMs: 0, error: "bad json" }, "b1", healthClock(0, 7200));
    expect(c.causes).toEqual([]);
    expect(c.notes).toEqual([
      expect.stringMatching(
        /^published pointer unreadable \(no effect on status\): bad json for 2 h\. Build b1 keeps serving; run `tsx build\/cli\.ts restore/,
      ),
    ]);
    expect(pointerCheck({ sinceMs: 0, error: "x" }, null, healthClock(0)).notes[0]).not.toContain("keeps serving");
    expect(pointerCheck(null, "b1", healthClock(0)).notes).toEqual([]);
  });
});
