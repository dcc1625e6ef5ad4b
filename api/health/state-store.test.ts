import { describe, expect, it } from "vitest";
import { healthClock } from "./format.ts";
import { stateStoreCheck } from "./state-store.ts";

// Spec 2.8/2.9: an unavailable state store sets status degraded (public cause "db unhealthy"); times are on the clock of `timestamp`.
const status = (state: "ok" | "unavailable") => ({
  state,
  circuit: state === "ok" ? ("closed" as const) : ("open" as const),
  backend: "postgres" as const,
  reason: state === "ok" ? null : "timeout",
  lastOkAt: 1000,
  lastFailureAt: state === "ok" ? null : 1500,
});

describe("state store check", () => {
  it("absent without a store; an ok store is echoed with its times shifted onto the replay clock", () => {
    expect(stateStoreCheck(undefined, healthClock(100)).section).toBeUndefined();
    const c = stateStoreCheck(status("ok"), healthClock(100, 2000));
    expect(c.section).toMatchObject({ state: "ok", lastOkAt: 1000 - 1900, lastFailureAt: null });
    expect(c.causes).toEqual([]);
  });

  it("unavailable: degraded, cause db-unhealthy with the generic reason, and a warning naming what answers 503", () => {
    const c = stateStoreCheck(status("unavailable"), healthClock(2000));
    expect(c.causes).toEqual([
      { code: "db-unhealthy", status: "degraded", publicImpact: true, detail: "state store unavailable: timeout" },
    ]);
    expect(c.statusWarnings).toEqual([
      expect.stringMatching(
        /^state store \(postgres\) unavailable \(sets status degraded\): timeout, circuit open; last ok 1970-01-01T00:16Z \(16 min before now\)/,
      ),
    ]);
  });
});
