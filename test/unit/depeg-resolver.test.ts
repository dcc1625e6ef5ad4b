import { describe, expect, it } from "vitest";
import {
  depthStratum,
  resolveIncidents,
  type ResolverIncident,
  type ResolverPoint,
} from "../../pipelines/analytics/depeg-resolver.ts";
import { must } from "../helpers/must.ts";

/**
 * The depeg resolver against worked values (issue 17, Deliver 9). Every expected number below is
 * computed by hand from the rule in the module docstring of pipelines/analytics/depeg-resolver.ts
 * (readiness = 0.3 input_coverage + 0.25 resolution_signal + 0.2 duration_support + 0.25
 * observation_maturity), never from running the code. Thresholds: 100 bps for peggedUSD, 150 otherwise.
 */
const H = 3600;
const S = 1_700_000_000; // every incident starts here

const incident = (
  over: Partial<ResolverIncident> & Pick<ResolverIncident, "id" | "stablecoinId">,
): ResolverIncident => ({
  symbol: over.stablecoinId.toUpperCase(),
  pegType: "peggedUSD",
  startedAt: S,
  endedAt: null,
  peakDeviationBps: -300,
  closeReason: null,
  supplyKnown: true,
  referenceTrusted: true,
  ...over,
});
/** A closed incident of another coin, `hours` long, ending `endOffsetH` hours after S (negative: before S). */
const closedIncident = (
  id: number,
  peakBps: number,
  hours: number,
  endOffsetH: number,
  closeReason: string,
): ResolverIncident =>
  incident({
    id,
    stablecoinId: `c${id}`,
    peakDeviationBps: peakBps,
    startedAt: S + (endOffsetH - hours) * H,
    endedAt: S + endOffsetH * H,
    closeReason,
  });
const pts = (...p: [number, number, boolean][]): ResolverPoint[] =>
  p.map(([h, bps, market]) => ({ ts: S + h * H, bps, market }));
const rowOf = (rows: ReturnType<typeof resolveIncidents>, id: number) => {
  const r = rows.find((x) => x.eventId === id);
  expect(r).toBeDefined();
  return must(r, `the row of incident ${id}`);
};

describe("depthStratum", () => {
  it("minor ≤ 250 < moderate ≤ 1000 < severe ≤ 2500 < catastrophic, by |peak|", () => {
    expect([250, 251, -1000, 1001, -2500, 2501].map(depthStratum)).toEqual([
      "minor",
      "moderate",
      "moderate",
      "severe",
      "severe",
      "catastrophic",
    ]);
  });
});

describe("resolveIncidents: worked values", () => {
  it("seals early (forecast_readiness) a recovering incident, predicting from comparable closures", () => {
    // Comparable closures for a moderate incident (250 < |peak| ≤ 1000), all ended before S:
    // 1 h, 2 h, 3 h, 4 h, 10 h; four recovered-primary, one orphan-tracking-removed.
    // Not comparable: 9 (minor, 50 h) and 10 (moderate but ends S+7h, after the lock run at S+6h).
    const closed = [
      closedIncident(2, -400, 1, -100, "recovered-primary"),
      closedIncident(3, -600, 2, -90, "recovered-primary"),
      closedIncident(4, 800, 3, -80, "recovered-primary"),
      closedIncident(5, -260, 4, -70, "orphan-tracking-removed"),
      closedIncident(6, -999, 10, -60, "recovered-primary"),
      closedIncident(9, -200, 50, -1, "recovered-primary"),
      closedIncident(10, -500, 100, 7, "recovered-primary"),
    ];
    const inc = incident({ id: 1, stablecoinId: "a", peakDeviationBps: -300 });
    const points = new Map([["a", pts([0, -300, true], [2, -250, false], [6, -80, false])]]);
    const row = rowOf(resolveIncidents([inc, ...closed], points, S + 10 * H), 1);
    // Run S: 1 point → insufficient_signal (0.05); inputs all present (1); 5 comparable → duration 0.75·1+0.25·1 = 1;
    //   maturity 0 (< 1 h) → 0.3 + 0.0125 + 0.2 + 0 = 0.5125 ≤ 0.75: no lock.
    // Run S+2h: last −250 > half the peak (150) → not recovering; ≤ 2500 → at_risk, factors: 250 > 2·100 (1) + ≥ 4 points (0)
    //   → 0.62 + 0.02 = 0.64; maturity (2−1)/5 = 0.2 → 0.3 + 0.16 + 0.2 + 0.05 = 0.71 ≤ 0.75: no lock.
    // Run S+6h: last −80 ≤ 150 and ≤ 200 → recovery_likely, factors: 80 < 100 (1) + market quote seen (1) + |peak| ≤ 1000 (1)
    //   → 0.9 + min(0.1, 0.075) = 0.975; maturity (6−1)/5 = 1 → 0.3 + 0.24375 + 0.2 + 0.25 = 0.99375 → 0.994 > 0.75: seal.
    expect(row.state).toBe("frozen");
    expect(row.lockTrigger).toBe("forecast_readiness");
    expect(row.lockedAt).toBe(S + 6 * H);
    expect(row.lockTimingSec).toBe(6 * H);
    expect(row.verdict).toBe("recovery_likely");
    expect(row.readiness.score).toBe(0.994);
    expect(row.readiness.strictEarlyLockReady).toBe(true);
    expect(row.readiness.components).toEqual({
      input_coverage: 1,
      resolution_signal: 0.975,
      duration_support: 1,
      observation_maturity: 1,
    });
    expect(row.readiness.reasons).toEqual(["verdict:recovery_likely", "comparable-closures:5"]);
    // median(1, 2, 3, 4, 10 h) = 3 h; recovered 4 of 5 = 0.8
    expect(row.predictedDurationSec).toBe(3 * H);
    expect(row.recoveryLikelihood).toBe(0.8);
    expect(row.depthStratum).toBe("moderate");
    expect(row.backstop).toMatchObject({ backstopAt: S + 72 * H, reached: false });
    expect(row.deferralCount).toBe(0);
    expect(row.liveOverlay).toMatchObject({ active: true, currentDeviationBps: -80, observedDurationSec: 10 * H });
  });

  it("defers the backstop while the price is stale, then seals at the next healthy run (readiness_backstop)", () => {
    // Three moderate closures (thin support): 2 h, 6 h, 20 h; two recovered.
    const closed = [
      closedIncident(2, -300, 2, -50, "recovered-primary"),
      closedIncident(3, 700, 6, -40, "recovered-primary"),
      closedIncident(4, -900, 20, -30, "orphan-tracking-removed"),
    ];
    const inc = incident({
      id: 1,
      stablecoinId: "b",
      pegType: "peggedEUR",
      peakDeviationBps: -600,
      supplyKnown: false,
    });
    const points = new Map([
      ["b", pts([0, -600, false], [1, -500, false], [2, -450, false], [3, -420, false], [80, -400, false])],
    ]);
    const row = rowOf(resolveIncidents([inc, ...closed], points, S + 100 * H), 1);
    // Inputs missing: supply, market evidence → 1 − 0.28·2 = 0.44. Duration support: 3 closures → 0.75·0.65 + 0.25·0.55 = 0.625.
    // Never early: at_risk's signal ≤ 0.70 caps the score at 0.132 + 0.175 + 0.125 + 0.25 = 0.682.
    // Backstop run S+72h: last point S+3h is 69 h old (> 36 h) → unhealthy → deferred (1).
    // Run S+80h: last −400, peak −600: 400 > 300 → at_risk, factors: 400 > 2·150 (1) + 5 points ≥ 4 (1) → 0.66;
    //   maturity 1 → 0.3·0.44 + 0.25·0.66 + 0.2·0.625 + 0.25 = 0.132 + 0.165 + 0.125 + 0.25 = 0.672; past the backstop → seal.
    expect(row.state).toBe("frozen");
    expect(row.lockTrigger).toBe("readiness_backstop");
    expect(row.lockedAt).toBe(S + 80 * H);
    expect(row.lockTimingSec).toBe(80 * H);
    expect(row.deferralCount).toBe(1);
    expect(row.deferralReason).toBe("inputs-stale");
    expect(row.verdict).toBe("at_risk");
    expect(row.readiness.score).toBe(0.672);
    expect(row.readiness.strictEarlyLockReady).toBe(false);
    expect(row.readiness.components).toEqual({
      input_coverage: 0.44,
      resolution_signal: 0.66,
      duration_support: 0.625,
      observation_maturity: 1,
    });
    expect(row.readiness.reasons).toEqual([
      "missing:supply",
      "missing:market-evidence",
      "verdict:at_risk",
      "comparable-closures:3",
    ]);
    // median(2, 6, 20 h) = 6 h; recovered 2 of 3 = 0.667
    expect(row.predictedDurationSec).toBe(6 * H);
    expect(row.recoveryLikelihood).toBe(0.667);
    expect(row.backstop.reached).toBe(true);
  });

  it("is lock_deferred when no healthy run follows a stale backstop", () => {
    const inc = incident({ id: 1, stablecoinId: "d", peakDeviationBps: -150 });
    const rows = resolveIncidents([inc], new Map([["d", pts([0, -150, true], [1, -140, true])]]), S + 100 * H);
    // backstop S+72h: last point 71 h old → unhealthy; no later point → still deferred at as-of
    expect(rowOf(rows, 1)).toMatchObject({
      state: "lock_deferred",
      lockedAt: null,
      deferralCount: 1,
      deferralReason: "inputs-stale",
      verdict: null,
    });
  });

  it("calls recovery_unlikely for a deep, non-recovering incident; no comparable closure → no duration or likelihood", () => {
    const inc = incident({ id: 1, stablecoinId: "u", peakDeviationBps: -4000 });
    const row = rowOf(
      resolveIncidents([inc], new Map([["u", pts([0, -3000, true], [30, -4000, true])]]), S + 40 * H),
      1,
    );
    // Run S+30h: last −4000 > 2500 and ≥ 0.8·4000 → recovery_unlikely, factors: 4000 > 5000 (0) + open > 24 h (1)
    //   → 0.9 + 0.025 = 0.925; no closure → 0.75·0.35 + 0.25·0.55 = 0.4; inputs 1; maturity 1
    //   → 0.3 + 0.23125 + 0.08 + 0.25 = 0.86125 → 0.861 > 0.75: seal.
    expect(row).toMatchObject({
      state: "frozen",
      lockTrigger: "forecast_readiness",
      lockedAt: S + 30 * H,
      verdict: "recovery_unlikely",
      predictedDurationSec: null,
      recoveryLikelihood: null,
      depthStratum: "catastrophic",
    });
    expect(row.readiness.score).toBe(0.861);
    expect(row.readiness.components).toEqual({
      input_coverage: 1,
      resolution_signal: 0.925,
      duration_support: 0.4,
      observation_maturity: 1,
    });
  });

  it("seals a no_call when the healthy backstop run has fewer than 2 points, listing the missing inputs", () => {
    const inc = incident({ id: 1, stablecoinId: "n", peakDeviationBps: -150 });
    const row = rowOf(resolveIncidents([inc], new Map([["n", pts([40, -150, false])]]), S + 100 * H), 1);
    // Backstop run S+72h: the one point (S+40h) is 32 h old (≤ 36 h: healthy); 1 point → insufficient_signal (0.05);
    //   missing: market evidence → 0.72 → 0.216 + 0.0125 + 0.08 + 0.25 = 0.5585
    expect(row).toMatchObject({
      state: "no_call",
      lockTrigger: "readiness_backstop",
      lockedAt: S + 72 * H,
      verdict: null,
      predictedDurationSec: null,
      recoveryLikelihood: null,
      missingInputs: ["market-evidence"],
    });
    expect(row.readiness.score).toBeCloseTo(0.5585, 2);
  });

  it("is closed_pre_lock when the incident recovers before any lock, and pending_lock while waiting", () => {
    const closedEarly = incident({
      id: 1,
      stablecoinId: "e",
      peakDeviationBps: -200,
      endedAt: S + 2 * H,
      closeReason: "recovered-primary",
    });
    const waiting = incident({ id: 2, stablecoinId: "w", peakDeviationBps: -300 });
    const rows = resolveIncidents(
      [closedEarly, waiting],
      new Map([
        ["e", pts([0, -200, false], [1, -150, false])],
        ["w", pts([0, -300, false], [2, -280, false])],
      ]),
      S + 3 * H,
    );
    expect(rowOf(rows, 1)).toMatchObject({
      state: "closed_pre_lock",
      lockedAt: null,
      verdict: null,
      predictedDurationSec: null,
    });
    const w = rowOf(rows, 2);
    // Run S+2h: 280 > 150 → at_risk, factors: 280 > 200 (1) → 0.64; market missing → 0.72; closure "e" is minor, "w" moderate
    //   → no comparable → 0.4; maturity 0.2 → 0.216 + 0.16 + 0.08 + 0.05 = 0.506
    expect(w).toMatchObject({ state: "pending_lock", lockedAt: null, verdict: null });
    expect(w.readiness.score).toBe(0.506);
    expect(w.readiness.reasons).toEqual(["missing:market-evidence", "verdict:at_risk", "comparable-closures:0"]);
    expect(w.liveOverlay.currentDeviationBps).toBe(-280);
  });
});
