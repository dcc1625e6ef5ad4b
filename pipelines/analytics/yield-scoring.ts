/**
 * Yield rankings (`ballast-yield-v1`): pure functions over single-asset pools of the DefiLlama yields
 * `/pools` snapshot matched to one registry coin. Informed by the reference's yield score (methodology
 * section 8.2), restated over the inputs we have: one snapshot's current APY (no 30-day series is
 * recorded), its 1/7-day changes and reward share, and each coin's safety score.
 *
 * Build time (per pool row, safety-independent):
 * - benchmark: USD = the TVL-weighted mean APY of the snapshot's pools on tokenised T-bill funds
 *   (registry `risk.backing` `treasury-fund`), a proxy of the 3-month T-bill rate (`isProxy`); other
 *   currencies have no recorded benchmark: rate null, `isFallback`, `fallbackMode` `unavailable`.
 * - excessYield = apy − benchmark; hurdleRebase = usdRate − benchmark (0 for USD rows or missing rates);
 *   effectiveYield = max(0, apy + 0.25 × excessYield + hurdleRebase) (excessYield 0 without a benchmark).
 * - sourceRiskPenalty = clamp(1 + 0.5 × outlier + 0.5 × rewardShare, 1, 2.5); rowUtility = effectiveYield / penalty.
 * - sustainability = max(0.3, 1 − CV of the pool's daily APY samples) with ≥ 2 samples, else
 *   max(0.3, 1 − 0.5 × rewardShare − min(0.2, 0.2 × |apyPct7D| / max(apy, 0.01))).
 * Read time (`hydrate` in site-data/yields.ts, with the coin's current safety score; no card → 40, grade NR):
 * - yieldToRisk = apy / (101 − safety); riskPenalty = max(0.5, (101 − safety) / 20);
 *   yieldEfficiency = rowUtility / riskPenalty^1.75; pharosYieldScore = clamp(round(yieldEfficiency ×
 *   sustainability × 8), 0, 100) (spec 2.14 field name).
 * Ranking: score desc, then APY desc, then pool id.
 *
 * Version: `YIELD_VERSION`, with the published constants and `round` (./yield-scoring.version.ts).
 */
import { type PoolInput, round } from "./yield-scoring.version.ts";

export type { PoolInput };

/** A benchmark rate (percent) of one currency (spec 2.14). */
export interface Benchmark {
  key: string;
  label: string;
  currency: string;
  rate: number | null;
  recordDate: string | null;
  fetchedAt: number | null;
  ageSeconds: number | null;
  source: string;
  isFallback: boolean;
  fallbackMode: "none" | "unavailable";
  isProxy: boolean;
}

/** USD benchmark proxy and the other currencies' (unavailable) benchmarks, from the snapshot's pools. */
export function benchmarks(pools: PoolInput[], currencies: string[], asOf: number): Record<string, Benchmark> {
  const funds = pools.filter(
    (p) => p.backing === "treasury-fund" && p.pegCurrency === "USD" && !p.outlier && p.tvlUsd > 0,
  );
  const tvl = funds.reduce((s, p) => s + p.tvlUsd, 0);
  const fetchedAt = pools.length ? Math.max(...pools.map((p) => p.observedAt)) : null;
  const out: Record<string, Benchmark> = {
    USD: {
      key: "usd-tbill-fund-proxy",
      label: "USD: TVL-weighted APY of tokenised T-bill fund pools (proxy of the 3-month T-bill)",
      currency: "USD",
      rate: tvl > 0 ? round(funds.reduce((s, p) => s + p.apy * p.tvlUsd, 0) / tvl, 4) : null,
      recordDate: fetchedAt === null ? null : new Date(fetchedAt * 1000).toISOString().slice(0, 10),
      fetchedAt,
      ageSeconds: fetchedAt === null ? null : Math.max(0, asOf - fetchedAt),
      source: `defillama-yields: ${funds.length} treasury-fund pools`,
      isFallback: tvl <= 0,
      fallbackMode: tvl > 0 ? "none" : "unavailable",
      isProxy: true,
    },
  };
  for (const c of [...new Set(currencies)].filter((c) => c !== "USD").sort()) {
    out[c] = {
      key: `${c.toLowerCase()}-unavailable`,
      label: `${c}: no recorded benchmark rate`,
      currency: c,
      rate: null,
      recordDate: null,
      fetchedAt: null,
      ageSeconds: null,
      source: "none recorded",
      isFallback: true,
      fallbackMode: "unavailable",
      isProxy: false,
    };
  }
  return out;
}

/** Safety-independent metrics of one pool row. */
export interface BaseYield {
  rewardShare: number;
  benchmarkRate: number | null;
  excessYield: number | null;
  effectiveYield: number;
  sourceRiskPenalty: number;
  rowUtility: number;
  sustainability: number;
  sustainabilityBasis: "apy-variance" | "reward-share-and-trend";
}

/** Build-time metrics of `p` against the benchmarks (see the module doc). */
export function baseYield(p: PoolInput, bench: Record<string, Benchmark>): BaseYield {
  const rewardShare = p.apy > 0 && p.apyReward !== null ? Math.min(1, Math.max(0, p.apyReward / p.apy)) : 0;
  const usd = bench.USD?.rate ?? null;
  const rate = bench[p.pegCurrency]?.rate ?? null;
  const excess = rate === null ? null : p.apy - rate;
  const rebase = p.pegCurrency === "USD" || usd === null || rate === null ? 0 : usd - rate;
  const effectiveYield = Math.max(0, p.apy + 0.25 * (excess ?? 0) + rebase);
  const sourceRiskPenalty = Math.min(2.5, Math.max(1, 1 + (p.outlier ? 0.5 : 0) + 0.5 * rewardShare));
  let sustainability: number;
  let basis: BaseYield["sustainabilityBasis"];
  if (p.apySamples.length >= 2) {
    const mean = p.apySamples.reduce((a, b) => a + b, 0) / p.apySamples.length;
    const sd = Math.sqrt(p.apySamples.reduce((a, b) => a + (b - mean) ** 2, 0) / p.apySamples.length);
    sustainability = Math.max(0.3, 1 - (mean > 0 ? sd / mean : 1));
    basis = "apy-variance";
  } else {
    const trend = Math.min(0.2, (0.2 * Math.abs(p.apyPct7D ?? 0)) / Math.max(p.apy, 0.01));
    sustainability = Math.max(0.3, 1 - 0.5 * rewardShare - trend);
    basis = "reward-share-and-trend";
  }
  return {
    rewardShare: round(rewardShare, 4),
    benchmarkRate: rate,
    excessYield: excess === null ? null : round(excess, 4),
    effectiveYield: round(effectiveYield, 4),
    sourceRiskPenalty: round(sourceRiskPenalty, 4),
    rowUtility: round(effectiveYield / sourceRiskPenalty, 4),
    sustainability: round(sustainability, 4),
    sustainabilityBasis: basis,
  };
}
