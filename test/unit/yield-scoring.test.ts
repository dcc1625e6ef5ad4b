/**
 * Yield scoring (`ballast-yield-v1`, pipelines/analytics/yield-scoring.ts; read-time `hydrate` in
 * site-data/yields.ts) against values worked out by hand from the documented formula (docs/methodology/markets.md "Yields",
 * the module doc; reference methodology 8.2). Every expected number below is derived in its comment.
 */
import { describe, expect, it } from "vitest";
import { baseYield, type Benchmark, benchmarks, type PoolInput } from "../../pipelines/analytics/yield-scoring.ts";
import { hydrate } from "../../site-data/yields.ts";

const OBSERVED = 1_756_000_000;
const pool = (over: Partial<PoolInput>): PoolInput => ({
  poolId: "p",
  stablecoinId: "c",
  symbol: "C",
  pegCurrency: "USD",
  project: "proj",
  chain: "Ethereum",
  poolMeta: null,
  tvlUsd: 1_000_000,
  apy: 10,
  apyBase: null,
  apyReward: null,
  apyPct1D: null,
  apyPct7D: null,
  outlier: false,
  observedAt: OBSERVED,
  backing: null,
  apySamples: [],
  ...over,
});
const bench = (rates: Record<string, number | null>): Record<string, Benchmark> =>
  Object.fromEntries(
    Object.entries(rates).map(([currency, rate]) => [
      currency,
      {
        key: currency,
        label: currency,
        currency,
        rate,
        recordDate: null,
        fetchedAt: null,
        ageSeconds: null,
        source: "test",
        isFallback: rate === null,
        fallbackMode: rate === null ? "unavailable" : "none",
        isProxy: false,
      } satisfies Benchmark,
    ]),
  );

describe("benchmarks: USD = TVL-weighted APY of the snapshot's T-bill fund pools", () => {
  it("weights by TVL and leaves out outliers, other currencies and other backings", () => {
    const pools = [
      pool({ poolId: "f1", backing: "treasury-fund", apy: 5, tvlUsd: 100 }),
      pool({ poolId: "f2", backing: "treasury-fund", apy: 4, tvlUsd: 300, observedAt: OBSERVED + 60 }),
      pool({ poolId: "f3", backing: "treasury-fund", apy: 50, tvlUsd: 1000, outlier: true }), // outlier: out
      pool({ poolId: "f4", backing: "treasury-fund", apy: 9, tvlUsd: 1000, pegCurrency: "EUR" }), // not USD: out
      pool({ poolId: "x", backing: "fiat-reserves", apy: 12, tvlUsd: 1000 }), // not a fund: out
    ];
    const b = benchmarks(pools, ["USD", "EUR", "EUR"], OBSERVED + 3600);
    // (5 × 100 + 4 × 300) / (100 + 300) = (500 + 1200) / 400 = 4.25
    expect(b.USD).toMatchObject({
      rate: 4.25,
      isFallback: false,
      fallbackMode: "none",
      isProxy: true,
      source: "defillama-yields: 2 treasury-fund pools",
    });
    // fetchedAt = the newest observation (f2, OBSERVED + 60); age = as-of − that = 3600 − 60 = 3540 s.
    expect(b.USD).toMatchObject({ fetchedAt: OBSERVED + 60, ageSeconds: 3540 });
    // EUR listed once, with no recorded rate.
    expect(b.EUR).toMatchObject({
      key: "eur-unavailable",
      rate: null,
      isFallback: true,
      fallbackMode: "unavailable",
      isProxy: false,
    });
    expect(Object.keys(b).sort()).toEqual(["EUR", "USD"]);
  });

  it("no fund pool: USD rate null, fallback unavailable", () => {
    const b = benchmarks([pool({ backing: "fiat-reserves" })], ["USD"], OBSERVED);
    expect(b.USD).toMatchObject({ rate: null, isFallback: true, fallbackMode: "unavailable" });
  });
});

describe("baseYield (build time)", () => {
  const usd = bench({ USD: 4.25 });

  it("USD pool, one sample: excess yield, reward-share penalty, sustainability from reward share and 7-day trend", () => {
    const r = baseYield(pool({ apy: 10, apyBase: 5, apyReward: 5, apyPct7D: -2, apySamples: [10] }), usd);
    // rewardShare = 5 / 10 = 0.5; excess = 10 − 4.25 = 5.75; rebase 0 (USD)
    // effective = max(0, 10 + 0.25 × 5.75 + 0) = 10 + 1.4375 = 11.4375
    // penalty = clamp(1 + 0 + 0.5 × 0.5, 1, 2.5) = 1.25; utility = 11.4375 / 1.25 = 9.15
    // trend = min(0.2, 0.2 × |−2| / max(10, 0.01)) = min(0.2, 0.04) = 0.04
    // sustainability = max(0.3, 1 − 0.5 × 0.5 − 0.04) = 0.71
    expect(r).toEqual({
      rewardShare: 0.5,
      benchmarkRate: 4.25,
      excessYield: 5.75,
      effectiveYield: 11.4375,
      sourceRiskPenalty: 1.25,
      rowUtility: 9.15,
      sustainability: 0.71,
      sustainabilityBasis: "reward-share-and-trend",
    });
  });

  it("outlier with two samples: outlier penalty, sustainability = 1 − CV", () => {
    const r = baseYield(pool({ apy: 6, apyReward: null, outlier: true, apySamples: [4, 6] }), usd);
    // rewardShare 0 (no reward APY); excess = 6 − 4.25 = 1.75; effective = 6 + 0.25 × 1.75 = 6.4375
    // penalty = 1 + 0.5 (outlier) + 0 = 1.5; utility = 6.4375 / 1.5 = 4.291666… → 4.2917
    // samples 4, 6: mean 5, population sd = √((1 + 1) / 2) = 1, CV = 0.2 → sustainability 0.8
    expect(r).toMatchObject({
      rewardShare: 0,
      excessYield: 1.75,
      effectiveYield: 6.4375,
      sourceRiskPenalty: 1.5,
      rowUtility: 4.2917,
      sustainability: 0.8,
      sustainabilityBasis: "apy-variance",
    });
  });

  it("sustainability floors at 0.3; a reward APY above the APY caps the share at 1", () => {
    // samples 1, 9: mean 5, sd 4, CV 0.8 → 1 − 0.8 = 0.2 → floor 0.3
    expect(baseYield(pool({ apy: 9, apySamples: [1, 9] }), usd).sustainability).toBe(0.3);
    const r = baseYield(pool({ apy: 10, apyReward: 12, outlier: true }), usd);
    // rewardShare = min(1, 12 / 10) = 1; penalty = 1 + 0.5 + 0.5 × 1 = 2 (≤ 2.5)
    // effective 11.4375 (as in the first case); utility = 11.4375 / 2 = 5.71875 → 5.7188
    // no samples: sustainability = max(0.3, 1 − 0.5 × 1 − 0) = 0.5
    expect(r).toMatchObject({ rewardShare: 1, sourceRiskPenalty: 2, rowUtility: 5.7188, sustainability: 0.5 });
  });

  it("below the benchmark the effective yield shrinks, and never goes below 0", () => {
    // apy 1: effective = max(0, 1 + 0.25 × (1 − 4.25)) = 1 − 0.8125 = 0.1875
    expect(baseYield(pool({ apy: 1 }), usd)).toMatchObject({
      excessYield: -3.25,
      effectiveYield: 0.1875,
      rowUtility: 0.1875,
    });
    // apy 0: rewardShare 0 (apy not > 0); effective = max(0, 0 + 0.25 × (−4.25)) = max(0, −1.0625) = 0
    // trend: apyPct7D null → 0, so sustainability = max(0.3, 1 − 0 − 0) = 1
    expect(baseYield(pool({ apy: 0, apyReward: 3 }), usd)).toMatchObject({
      rewardShare: 0,
      effectiveYield: 0,
      rowUtility: 0,
      sustainability: 1,
    });
  });

  it("other currencies: the rebase to USD, or no benchmark at all", () => {
    // EUR rate 2.5, USD 4: excess = 3 − 2.5 = 0.5; rebase = 4 − 2.5 = 1.5
    // effective = 3 + 0.25 × 0.5 + 1.5 = 4.625; penalty 1 → utility 4.625
    expect(baseYield(pool({ apy: 3, pegCurrency: "EUR" }), bench({ USD: 4, EUR: 2.5 }))).toMatchObject({
      benchmarkRate: 2.5,
      excessYield: 0.5,
      effectiveYield: 4.625,
      rowUtility: 4.625,
    });
    // EUR without a rate: excess null (counts 0), rebase 0 → effective = apy = 3
    expect(baseYield(pool({ apy: 3, pegCurrency: "EUR" }), bench({ USD: 4, EUR: null }))).toMatchObject({
      benchmarkRate: null,
      excessYield: null,
      effectiveYield: 3,
      rowUtility: 3,
    });
  });
});

describe("hydrate (read time): safety-adjusted score", () => {
  const row = { apy: 10, rowUtility: 9.15, sustainability: 0.71 };

  it("safety 81: penalty 1", () => {
    // divisor = 101 − 81 = 20; riskPenalty = max(0.5, 20 / 20) = 1; efficiency = 9.15 / 1^1.75 = 9.15
    // score = round(9.15 × 0.71 × 8) = round(51.972) = 52; yieldToRisk = 10 / 20 = 0.5
    expect(hydrate(row, { score: 81, grade: "A-" })).toEqual({
      safetyScore: 81,
      safetyGrade: "A-",
      yieldToRisk: 0.5,
      pharosYieldScore: 52,
    });
  });

  it("no card, or an NR card: safety 40, grade NR", () => {
    // divisor = 61; riskPenalty = 61 / 20 = 3.05; 3.05^1.75 = e^(1.75 × ln 3.05) = e^(1.75 × 1.11514) = e^1.95150 ≈ 7.0394
    // efficiency = 9.15 / 7.0394 ≈ 1.29983; score = round(1.29983 × 0.71 × 8) = round(7.383) = 7
    // yieldToRisk = 10 / 61 = 0.163934… → 0.1639
    const expected = { safetyScore: 40, safetyGrade: "NR", yieldToRisk: 0.1639, pharosYieldScore: 7 };
    expect(hydrate(row, undefined)).toEqual(expected);
    expect(hydrate(row, { score: null, grade: "NR" })).toEqual(expected);
  });

  it("safety 100: penalty floors at 0.5 and the score clamps at 100", () => {
    // divisor 1; riskPenalty = max(0.5, 0.05) = 0.5; 0.5^1.75 = 2^−1.75 ≈ 0.29730
    // efficiency = 9.15 / 0.29730 ≈ 30.777; × 0.71 × 8 ≈ 174.8 → clamp 100; yieldToRisk = 10 / 1 = 10
    expect(hydrate(row, { score: 100, grade: "A+" })).toEqual({
      safetyScore: 100,
      safetyGrade: "A+",
      yieldToRisk: 10,
      pharosYieldScore: 100,
    });
  });
});
