import { describe, expect, it } from "vitest";
import { depreciation, stabilityIndex, type PsiContributor } from "../../pipelines/analytics/stability-index.ts";
import { psiBand } from "../../pipelines/analytics/stability-index.version.ts";
import {
  contagionAmplifier,
  curve,
  deadBefore,
  dewsBand,
  dewsBase,
  dewsFinal,
  dewsSignals,
  type DewsDayInput,
  evidenceCap,
  psiAmplifier,
  SUPPLY_1D,
  SUPPLY_7D,
} from "../../pipelines/analytics/stress-signals.ts";
import { avg24h } from "../../site-data/stability-index.ts";
import { must } from "../helpers/must.ts";

const contributor = (mcapUsd: number | null, bps: number, factor = 1): PsiContributor => ({
  id: "x",
  symbol: "X",
  bps,
  mcapUsd,
  ageDays: 0,
  factor,
  mcapBasis: "supply",
});

// Expected values below are computed by hand from the formulas in the module docstrings.
describe("stability index formula", () => {
  it("one small contributor: severity 2 × 0.01 × log2(2) × 60 = 1.2, breadth 3, stress 3, trend −2 → 90.8 BEDROCK", () => {
    const r = stabilityIndex([contributor(1e9, -200)], 100e9, [4e9], -2);
    expect(r.components).toEqual({ severity: 1.2, breadth: 3, stressBreadth: 3, trend: -2 });
    expect(r).toMatchObject({ score: 90.8, band: "BEDROCK" });
  });

  it("caps: severity 68, breadth 17, stress 5, trend ±5", () => {
    // 10 B at −500 bps of 100 B: 5 × 0.1 × log2(11) × 60 ≈ 103.8 → 68; sqrt(10) × 3 ≈ 9.49
    const big = stabilityIndex([contributor(10e9, -500)], 100e9, [], 12);
    expect(big.components).toEqual({ severity: 68, breadth: 9.49, stressBreadth: 0, trend: 5 });
    expect(big.score).toBe(27.5); // 100 − 68 − 9.49 + 5 = 27.51 → one decimal
    expect(big.band).toBe("CRISIS");
    const all = stabilityIndex([contributor(40e9, -1000), contributor(5e9, -300)], 120e9, [40e9], -8);
    expect(all.components).toEqual({ severity: 68, breadth: 17, stressBreadth: 5, trend: -5 });
    expect(all).toMatchObject({ score: 5, band: "MELTDOWN" });
  });

  it("depreciation halves a 90-day-old incident's weight; unknown mcap weighs nothing; no total → null", () => {
    expect([depreciation(0), depreciation(30), depreciation(90), depreciation(200)]).toEqual([1, 1, 0.5, 0.25]);
    // sqrt(4) × 3 × 0.5 = 3; severity 1 × 0.04 × log2(5) × 60 × 0.5 = 2.786 → 2.79
    const r = stabilityIndex([contributor(4e9, 100, 0.5), contributor(null, -9000)], 100e9, [], 0);
    expect(r.components).toEqual({ severity: 2.79, breadth: 3, stressBreadth: 0, trend: 0 });
    expect(r.score).toBe(94.2);
    expect(stabilityIndex([contributor(1e9, -200)], null, [], 0)).toMatchObject({ score: null, band: null });
    expect(stabilityIndex([], 0, [], 0).score).toBeNull();
  });

  it("bands have inclusive lower bounds", () => {
    expect([100, 90, 89.9, 75, 74.9, 60, 59.9, 40, 39.9, 20, 19.9, 0].map(psiBand)).toEqual([
      "BEDROCK",
      "BEDROCK",
      "STEADY",
      "STEADY",
      "TREMOR",
      "TREMOR",
      "FRACTURE",
      "FRACTURE",
      "CRISIS",
      "CRISIS",
      "MELTDOWN",
      "MELTDOWN",
    ]);
  });

  it("avg24h weights the readings by the hours of the last 24 h they cover", () => {
    expect(avg24h(30, 90, 24)).toBe(30);
    expect(avg24h(30, 90, 6)).toBe(75); // (6 × 30 + 18 × 90) / 24
    expect(avg24h(30, null, 6)).toBe(30);
  });
});

describe("DEWS formula", () => {
  const day: DewsDayInput = {
    pegCurrency: "USD",
    mcapUsd: 1e9,
    supplyNow: 96,
    supplyPrevDay: 100,
    supplyPrevWeek: 100,
    worstAbsBps: 150,
    confidence: "low",
    prevConfidence: "high",
    blacklist: null,
    flow: null,
  };

  it("curves interpolate linearly and stay flat beyond their ends", () => {
    expect(curve(SUPPLY_1D, 2)).toBe(27.5);
    expect(curve(SUPPLY_7D, 5)).toBe(27.5);
    expect(curve(SUPPLY_1D, -3)).toBe(0);
    expect(curve(SUPPLY_1D, 50)).toBe(100);
  });

  it("signals: supply 4% down over a day and a week at $1B = 0.6 × 52.5 + 0.4 × 21.25 = 40; low after high = 75; 150 bps = 82.5", () => {
    const s = dewsSignals(day);
    expect(s.supplyVelocity.value).toBe(40);
    expect(s.priceConfidence.value).toBe(75);
    expect(s.divergence.value).toBe(82.5);
    for (const k of ["poolDrift", "liquidityErosion", "yield", "blacklist", "mintBurnFlow"] as const)
      expect(s[k]).toMatchObject({ available: false, value: null });
    expect(dewsSignals({ ...day, pegCurrency: "EUR" }).divergence.value).toBe(57.75); // × 0.7
  });

  it("base renormalises over available weight: (0.25 × 40 + 0.15 × 75 + 0.15 × 82.5) / 0.55 = 61.14 WARNING", () => {
    const { base, availableWeight } = dewsBase(dewsSignals(day));
    expect(availableWeight).toBe(0.55);
    expect(base).toBeCloseTo(61.136, 3);
    expect(dewsBand(must(base, "the DEWS base"))).toBe("WARNING");
  });

  it("no row below 0.30 available weight; supply alone never alerts (capped at WATCH)", () => {
    const supplyOnly = dewsSignals({ ...day, worstAbsBps: null, confidence: undefined, prevConfidence: undefined });
    expect(dewsBase(supplyOnly)).toEqual({ base: null, availableWeight: 0.25 });
    // 20% in a day, 30% in a week → 100; single-source 25: (25 + 3.75) / 0.4 = 71.875 → 35 without price evidence
    const noMarket = dewsSignals({
      ...day,
      supplyNow: 70,
      supplyPrevDay: 87.5,
      worstAbsBps: null,
      confidence: "single-source",
      prevConfidence: "single-source",
    });
    const { base } = dewsBase(noMarket);
    expect(base).toBe(71.875);
    expect(evidenceCap(must(base, "the DEWS base"), noMarket)).toBe(35);
  });

  it("blacklist spike and burn surge", () => {
    const s = dewsSignals({
      ...day,
      blacklist: { count: 6, avgPrev7: 2 },
      flow: { burned: 40, minted: 10, meanBurn: 10, baselineDays: 30 },
    });
    expect(s.blacklist.value).toBe(43.33); // ratio 3 on (2,30)-(5,70)
    expect(s.mintBurnFlow.value).toBe(66); // 0.6 × 70 (surge 4) + 0.4 × 60 (share 0.8)
    expect(
      dewsSignals({ ...day, flow: { burned: 40, minted: 10, meanBurn: 10, baselineDays: 6 } }).mintBurnFlow.available,
    ).toBe(false);
  });

  it("amplifiers: PSI 45 → 1.12, contagion DANGER 1.15 (max, cap 1.2); final round(61.136 × 1.12 × 1.15) = 79 DANGER", () => {
    expect(psiAmplifier(45)).toBeCloseTo(1.12, 10);
    expect([psiAmplifier(75), psiAmplifier(null)]).toEqual([1, 1]);
    expect([
      contagionAmplifier(["WARNING", "DANGER"]),
      contagionAmplifier(["WARNING"]),
      contagionAmplifier(["ALERT"]),
    ]).toEqual([1.15, 1.08, 1]);
    const s = dewsSignals(day);
    const final = dewsFinal(must(dewsBase(s).base, "the DEWS base"), psiAmplifier(45), 1.15, s);
    expect(final).toBe(79);
    expect(dewsBand(final)).toBe("DANGER");
  });

  it("bands: CALM 0-15, WATCH 16-35, ALERT 36-55, WARNING 56-75, DANGER 76-100; dead coins leave 30 days after their death period", () => {
    expect([0, 15, 16, 35, 36, 55, 56, 75, 76, 100].map(dewsBand)).toEqual([
      "CALM",
      "CALM",
      "WATCH",
      "WATCH",
      "ALERT",
      "ALERT",
      "WARNING",
      "WARNING",
      "DANGER",
      "DANGER",
    ]);
    const d = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 1000;
    expect(deadBefore("2022-05", d("2022-06-30"))).toBe(false);
    expect(deadBefore("2022-05", d("2022-07-01"))).toBe(true);
    expect(deadBefore("2022-05-09", d("2022-06-08"))).toBe(false);
    expect(deadBefore("2022-05-09", d("2022-06-09"))).toBe(true);
    expect(deadBefore(null, d("2030-01-01"))).toBe(false);
  });
});
