import { describe, expect, it } from "vitest";
import type { HealthStatus, StatusCause } from "../../api/health.ts";
import {
  evaluate,
  publicReason,
  publicTransitions,
  STATUS_HYSTERESIS,
  STATUS_SYSTEM_FRESHNESS_SEC,
  type StatusState,
  type StoredTransition,
} from "../../api/lib/status-history.ts";
import { must } from "../helpers/must.ts";

// Expected values follow reference 8.2 (STATUS_HYSTERESIS) and spec 2.9, not the implementation:
// healthy→stale on 1 raw stale; healthy→degraded after 2 consecutive raw degraded; degraded→stale after 2
// raw stale; degraded→healthy after 3 raw healthy and ≥ 120 s; stale→degraded after 2 raw degraded and
// ≥ 180 s; stale→healthy after 3 raw healthy and ≥ 180 s.

const T0 = 1_800_000_000;
const cacheStale: StatusCause = {
  code: "cache:stablecoins",
  status: "stale",
  publicImpact: true,
  detail: "stablecoins 3 h old",
};
const coverage: StatusCause = {
  code: "publication-coverage:list-snapshot",
  status: "degraded",
  publicImpact: false,
  detail: "list snapshot stale",
};
const causesOf: Record<HealthStatus, StatusCause[]> = {
  healthy: [],
  degraded: [{ ...cacheStale, status: "degraded" }],
  stale: [cacheStale],
};

/** Feeds raw statuses at the given times (s after T0) from `start`; returns every evaluation. */
function run(start: StatusState | null, steps: [number, HealthStatus][]) {
  let state = start;
  return steps.map(([dt, raw]) => {
    const ev = evaluate(state, { raw, causes: causesOf[raw], at: T0 + dt });
    state = ev.state;
    return ev;
  });
}
/** A state that has been `status` since T0 (changed then, last evaluated then, one raw observation of it). */
const since = (status: HealthStatus, changedAt = T0): StatusState => ({
  currentStatus: status,
  rawStatus: status,
  lastEvaluatedAt: changedAt,
  lastChangedAt: changedAt,
  consecutive: { healthy: 0, degraded: 0, stale: 0, [status]: 1 },
  causes: causesOf[status],
  version: 3,
});
const statuses = (evs: ReturnType<typeof run>) => evs.map((e) => e.state.currentStatus);

describe("hysteresis table", () => {
  it("is the reference table", () => {
    const table = Object.fromEntries(
      Object.entries(STATUS_HYSTERESIS).flatMap(([from, rules]) =>
        Object.entries(rules).map(([to, r]) => {
          const rule = must(r, `the ${from}→${to} rule`);
          return [`${from}→${to}`, [rule.minConsecutive, rule.minDwellSec]];
        }),
      ),
    );
    expect(table).toEqual({
      "healthy→stale": [1, 0],
      "healthy→degraded": [2, 0],
      "degraded→stale": [2, 0],
      "degraded→healthy": [3, 120],
      "stale→degraded": [2, 180],
      "stale→healthy": [3, 180],
    });
  });
});

describe("evaluate (pure hysteresis over the persisted state)", () => {
  it("the first observation sets the status (init, from null), whatever it is", () => {
    for (const raw of ["healthy", "degraded", "stale"] as const) {
      const ev = evaluate(null, { raw, causes: causesOf[raw], at: T0 });
      expect(ev.transition).toEqual({
        from: null,
        to: raw,
        rawStatus: raw,
        transitionType: "init",
        reason: "initial-observation",
        causes: causesOf[raw],
        at: T0,
      });
      expect(ev.state).toMatchObject({
        currentStatus: raw,
        lastChangedAt: T0,
        lastEvaluatedAt: T0,
        consecutive: { [raw]: 1 },
      });
    }
  });

  it("healthy → stale on the first raw stale", () => {
    const [ev] = run(since("healthy"), [[60, "stale"]]);
    expect(ev.transition).toMatchObject({
      from: "healthy",
      to: "stale",
      transitionType: "degrade",
      reason: "raw-stale-immediate-escalation",
      causes: [cacheStale],
      at: T0 + 60,
    });
    expect(ev.state).toMatchObject({ currentStatus: "stale", lastChangedAt: T0 + 60 });
  });

  it("healthy → degraded after 2 consecutive raw degraded, not after 1 or 2 interrupted ones", () => {
    const evs = run(since("healthy"), [
      [60, "degraded"],
      [120, "healthy"],
      [180, "degraded"],
      [240, "degraded"],
    ]);
    expect(statuses(evs)).toEqual(["healthy", "healthy", "healthy", "degraded"]);
    expect(evs.map((e) => e.reason)).toEqual([
      "hysteresis-hold",
      "steady",
      "hysteresis-hold",
      "raw-degraded-threshold",
    ]);
    expect(evs[3].transition).toMatchObject({ from: "healthy", to: "degraded", transitionType: "degrade" });
  });

  it("degraded → stale after 2 raw stale", () => {
    const evs = run(since("degraded"), [
      [60, "stale"],
      [120, "stale"],
    ]);
    expect(statuses(evs)).toEqual(["degraded", "stale"]);
    expect(evs[1].transition).toMatchObject({
      from: "degraded",
      to: "stale",
      transitionType: "degrade",
      reason: "raw-stale-threshold",
    });
  });

  it("degraded → healthy after 3 raw healthy and 120 s in degraded", () => {
    // 3 healthy within 90 s of the change: held until 120 s have passed
    const early = run(since("degraded"), [
      [30, "healthy"],
      [60, "healthy"],
      [90, "healthy"],
      [119, "healthy"],
      [120, "healthy"],
    ]);
    expect(statuses(early)).toEqual(["degraded", "degraded", "degraded", "degraded", "healthy"]);
    expect(early[4].transition).toMatchObject({
      from: "degraded",
      to: "healthy",
      transitionType: "recover",
      reason: "raw-healthy-recovery-threshold",
      causes: [],
    });
    // dwell long past, but only 2 healthy in a row (a degraded in between restarts the count)
    const interrupted = run(since("degraded"), [
      [600, "healthy"],
      [660, "healthy"],
      [720, "degraded"],
      [780, "healthy"],
      [840, "healthy"],
      [900, "healthy"],
    ]);
    expect(statuses(interrupted)).toEqual(["degraded", "degraded", "degraded", "degraded", "degraded", "healthy"]);
  });

  it("stale → degraded after 2 raw degraded and 180 s in stale", () => {
    const evs = run(since("stale"), [
      [100, "degraded"],
      [179, "degraded"],
      [180, "degraded"],
    ]);
    expect(statuses(evs)).toEqual(["stale", "stale", "degraded"]);
    expect(evs[2].transition).toMatchObject({
      from: "stale",
      to: "degraded",
      transitionType: "recover",
      reason: "raw-degraded-recovery-threshold",
    });
  });

  it("stale → healthy after 3 raw healthy and 180 s in stale", () => {
    const evs = run(since("stale"), [
      [60, "healthy"],
      [120, "healthy"],
      [179, "healthy"],
      [180, "healthy"],
    ]);
    expect(statuses(evs)).toEqual(["stale", "stale", "stale", "healthy"]);
    expect(evs[3].transition).toMatchObject({
      from: "stale",
      to: "healthy",
      transitionType: "recover",
      reason: "raw-healthy-recovery-threshold",
    });
    // alternating degraded and healthy never reaches either threshold: stale holds
    expect(
      statuses(
        run(since("stale"), [
          [200, "healthy"],
          [260, "degraded"],
          [320, "healthy"],
          [380, "degraded"],
        ]),
      ),
    ).toEqual(["stale", "stale", "stale", "stale"]);
  });

  it("raw equal to the current status holds (steady) and counts; the version is left to the store", () => {
    const [ev] = run(since("degraded"), [[60, "degraded"]]);
    expect(ev).toMatchObject({ transition: null, reason: "steady" });
    expect(ev.state).toMatchObject({
      currentStatus: "degraded",
      lastChangedAt: T0,
      lastEvaluatedAt: T0 + 60,
      consecutive: { healthy: 0, degraded: 2, stale: 0 },
      version: 3,
    });
  });

  it("observations more than 30 min apart are not consecutive: counts restart", () => {
    const gap = STATUS_SYSTEM_FRESHNESS_SEC + 1;
    const evs = run(since("healthy"), [
      [60, "degraded"],
      [60 + gap, "degraded"],
      [120 + gap, "degraded"],
    ]);
    expect(statuses(evs)).toEqual(["healthy", "healthy", "degraded"]);
    expect(evs[1].state.consecutive.degraded).toBe(1);
  });

  it("every rule of the table moves exactly at its count and dwell (property over the table)", () => {
    for (const [from, rules] of Object.entries(STATUS_HYSTERESIS) as [
      HealthStatus,
      typeof STATUS_HYSTERESIS.healthy,
    ][]) {
      for (const [to, rule] of Object.entries(rules) as [HealthStatus, NonNullable<(typeof rules)[HealthStatus]>][]) {
        const steps: [number, HealthStatus][] = Array.from({ length: rule.minConsecutive }, (_, i) => [
          Math.max(rule.minDwellSec, 1) + i,
          to,
        ]);
        const evs = run(since(from), steps);
        expect(must(evs.at(-1), `the last event of ${from}→${to}`).transition, `${from}→${to}`).toMatchObject({
          from,
          to,
          reason: rule.reason,
        });
        expect(
          evs.slice(0, -1).every((e) => e.transition === null),
          `${from}→${to} early`,
        ).toBe(true);
        if (rule.minDwellSec > 0) {
          const tooEarly = run(
            since(from),
            Array.from({ length: rule.minConsecutive }, (_, i) => [rule.minDwellSec - rule.minConsecutive + i, to]),
          );
          expect(
            tooEarly.every((e) => e.transition === null),
            `${from}→${to} dwell`,
          ).toBe(true);
        }
      }
    }
  });
});

describe("public filtering (spec 2.9)", () => {
  let id = 0;
  const row = (
    at: number,
    from: HealthStatus | null,
    to: HealthStatus,
    causes: StatusCause[],
    reason = "r",
  ): StoredTransition => ({
    id: ++id,
    from,
    to,
    rawStatus: to,
    transitionType:
      from === null ? "init" : to === "healthy" || (from === "stale" && to === "degraded") ? "recover" : "degrade",
    reason,
    causes,
    at,
  });

  it("keeps incidents opened by public-impact causes with every row up to the recovery; drops the others", () => {
    const rows = [
      row(T0, null, "healthy", []), // init healthy: not an incident
      row(T0 + 100, "healthy", "degraded", [coverage]), // non-public incident …
      row(T0 + 400, "degraded", "healthy", []), // … and its recovery: hidden
      row(T0 + 500, "healthy", "degraded", [causesOf.degraded[0], coverage]), // public incident opens
      row(T0 + 600, "degraded", "stale", [coverage]), // its later rows are kept whatever their causes
      row(T0 + 900, "stale", "degraded", [coverage]),
      row(T0 + 1200, "degraded", "healthy", []), // recovery closes it
      row(T0 + 1300, "healthy", "stale", [coverage, { ...coverage, status: "stale" }]), // non-public again
    ];
    expect(publicTransitions(rows, 0).map((t) => t.at - T0)).toEqual([500, 600, 900, 1200]);
  });

  it("an init into a public incident opens it; an incident open at the window's start keeps its rows in the window", () => {
    const rows = [
      row(T0, null, "stale", [cacheStale]),
      row(T0 + 300, "stale", "degraded", []),
      row(T0 + 900, "degraded", "healthy", []),
    ];
    expect(publicTransitions(rows, 0).map((t) => t.at - T0)).toEqual([0, 300, 900]);
    expect(publicTransitions(rows, T0 + 200).map((t) => t.at - T0)).toEqual([300, 900]);
    // the same rows opened by a non-public cause: nothing shown
    expect(publicTransitions([row(T0, null, "stale", [coverage]), row(T0 + 300, "stale", "healthy", [])], 0)).toEqual(
      [],
    );
  });

  it("the public reason names only public-impact causes", () => {
    const t = row(T0, "healthy", "stale", [cacheStale, coverage, { ...cacheStale }], "raw-stale-immediate-escalation");
    expect(publicReason(t)).toBe("raw-stale-immediate-escalation: cache:stablecoins stale");
    expect(publicReason(row(T0, "stale", "healthy", [coverage], "raw-healthy-recovery-threshold"))).toBe(
      "raw-healthy-recovery-threshold",
    );
  });
});
