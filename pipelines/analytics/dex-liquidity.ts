import {
  DEX_LIQUIDITY_VERSION,
  MIN_POOL_TVL_USD,
  ACTIVITY_COVERAGE_FLOOR,
  DEX_WEIGHTS,
  TOP_POOLS,
} from "./dex-liquidity.version.ts";
import { type Analytic, inputsAs, type RegistryCoinRow, type Row } from "./contract.ts";
import { buildCoinIndex, MATCH_INPUTS, matchCoinsFrom, matchPool, matchPoolFrom } from "./pool-matching.ts";
import { must } from "../../lib/must.ts";

/**
 * DEX liquidity score, methodology `ballast-dex-liquidity-v1` (our own; informed by the reference
 * model's composite, shared/reference/methodology.md §6, restricted to the inputs we have). Pure
 * functions plus one marts-layer DAG node (`dex_liquidity`, `dex_liquidity_daily`).
 *
 * Inputs: the pools of DefiLlama yields `/pools` captures (newest capture per UTC day, at or before
 * as-of) and their token → coin matches (pool-matching.ts). These are DefiLlama's *yield* pools: AMM
 * pools, but also lending markets and savings vaults holding the coin, so "depth" is TVL committed
 * on-chain to pools holding the coin, not order-book or AMM depth alone.
 *
 * - Retained pools of a coin: pools with a token matched to it. A pool of k tokens attributes TVL/k to
 *   each token (balances are not measured); a pool is retained when its attributed TVL is at least
 *   $10,000 (MIN_POOL_TVL_USD). Volumes are attributed the same way.
 * - Components (0-100):
 *   depth = clamp(35 × log10(max(tvl, 1) / 700,000), 0, 100) (the reference's supply-free form, a $1B
 *     reference market cap; v1 does not divide by supply because pool captures and supply captures
 *     are not observed together);
 *   concentration = (1 − HHI) × 100, HHI = Σ (poolTvl / tvl)² over retained pools (0-1);
 *   spread = ½ min(100, 25 × (protocols − 1)) + ½ min(100, 25 × (chains − 1));
 *   poolCount = min(100, 5 × retained pools);
 *   activity = clamp(38 × (log10(vol24h / tvl) + 3), 0, 100) over the retained pools reporting a 24 h
 *     volume, used only when they hold at least half the retained TVL (ACTIVITY_COVERAGE_FLOOR).
 * - Weights: depth 0.35, activity 0.20, concentration 0.20, spread 0.15, poolCount 0.10. Without
 *   usable activity the activity weight is left out and the others are renormalised (÷ 0.80): a
 *   missing volume is unknown, never a zero.
 * - score = round(clamp(Σ wᵢ cᵢ / Σ wᵢ, 0, 100)); components two decimals.
 * - Rated coins have `unavailable_reason` null. A coin with retained pools but no usable volume IS
 *   rated (depth and structure are evidence) and carries `activity_status` `activity-missing` (no
 *   retained pool reports volume) or `activity-coverage-below-floor` (some do, under half the TVL),
 *   with a `warning` naming it. A coin with no retained pool is not rated: score null, reason
 *   `no-retained-pools`. Volume totals (`total_volume_24h_usd`, `total_volume_7d_usd`) are null unless
 *   every retained pool reports that volume (never 0 for unknown).
 * - Universe: every registry coin not dead at as-of, one row per coin per capture day
 *   (`dex_liquidity_daily`); `dex_liquidity` is the newest day. No pool capture at or before as-of →
 *   both tables empty (the artifacts are then not published: 503 not yet available).
 *
 * Version: `DEX_LIQUIDITY_VERSION`, its label and published parameters (./dex-liquidity.version.ts).
 */

export type ActivityStatus = "observed" | "activity-missing" | "activity-coverage-below-floor";
export type DexUnavailableReason = "no-retained-pools";

/** One retained pool of a coin (TVL and volumes already attributed to the coin's token). */
export interface CoinPool {
  poolId: string;
  project: string;
  chain: string;
  symbol: string;
  tvlUsd: number;
  volume24hUsd: number | null;
  volume7dUsd: number | null;
  apy: number | null;
  poolMeta: string | null;
}

export interface DexComponents {
  depth: number;
  activity: number | null;
  concentration: number;
  spread: number;
  poolCount: number;
}

export interface DexScore {
  score: number | null;
  components: DexComponents | null;
  totalTvlUsd: number;
  poolCount: number;
  protocolCount: number;
  chainCount: number;
  hhi: number | null;
  totalVolume24hUsd: number | null;
  totalVolume7dUsd: number | null;
  volumeCoverageShare: number | null;
  activityStatus: ActivityStatus | null;
  unavailableReason: DexUnavailableReason | null;
  warning: string | null;
}

const clamp = (x: number, lo = 0, hi = 100) => Math.max(lo, Math.min(hi, x));
const r2 = (x: number) => Math.round(x * 100) / 100;
const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** Depth component from retained TVL (USD). */
export const depthComponent = (tvl: number) => clamp(35 * Math.log10(Math.max(tvl, 1) / 700_000));
/** Activity component from 24 h volume and TVL of the same pools (null when either is missing or TVL ≤ 0). */
export function activityComponent(vol24h: number | null, tvl: number): number | null {
  if (vol24h === null || !(tvl > 0)) return null;
  const vt = vol24h / tvl;
  return vt <= 0 ? 0 : clamp(38 * (Math.log10(vt) + 3));
}
/** Herfindahl-Hirschman index of pool TVLs (0-1); null without TVL. */
export function hhi(tvls: number[]): number | null {
  const total = tvls.reduce((s, x) => s + x, 0);
  return total > 0 ? tvls.reduce((s, x) => s + (x / total) ** 2, 0) : null;
}
export const spreadComponent = (protocols: number, chains: number) =>
  0.5 * Math.min(100, 25 * Math.max(0, protocols - 1)) + 0.5 * Math.min(100, 25 * Math.max(0, chains - 1));
export const poolCountComponent = (n: number) => Math.min(100, 5 * n);

/** The score of one coin from its retained pools (see the module doc). */
export function dexLiquidityScore(pools: CoinPool[]): DexScore {
  const retained = pools.filter((p) => p.tvlUsd >= MIN_POOL_TVL_USD);
  if (retained.length === 0) {
    return {
      score: null,
      components: null,
      totalTvlUsd: 0,
      poolCount: 0,
      protocolCount: 0,
      chainCount: 0,
      hhi: null,
      totalVolume24hUsd: null,
      totalVolume7dUsd: null,
      volumeCoverageShare: null,
      activityStatus: null,
      unavailableReason: "no-retained-pools",
      warning: null,
    };
  }
  const tvl = retained.reduce((s, p) => s + p.tvlUsd, 0);
  const withVol = retained.flatMap((p) =>
    p.volume24hUsd === null ? [] : [{ tvlUsd: p.tvlUsd, volume24hUsd: p.volume24hUsd }],
  );
  const volTvl = withVol.reduce((s, p) => s + p.tvlUsd, 0);
  const coverage = tvl > 0 ? volTvl / tvl : 0;
  const activityStatus: ActivityStatus =
    withVol.length === 0
      ? "activity-missing"
      : coverage < ACTIVITY_COVERAGE_FLOOR
        ? "activity-coverage-below-floor"
        : "observed";
  const activity =
    activityStatus === "observed"
      ? activityComponent(
          withVol.reduce((s, p) => s + p.volume24hUsd, 0),
          volTvl,
        )
      : null;
  // Retained pools hold at least MIN_POOL_TVL_USD each, so the total is positive.
  const h = must(hhi(retained.map((p) => p.tvlUsd)), "HHI of the retained pools");
  const protocols = new Set(retained.map((p) => p.project)).size;
  const chains = new Set(retained.map((p) => p.chain)).size;
  const c: DexComponents = {
    depth: depthComponent(tvl),
    activity,
    concentration: (1 - h) * 100,
    spread: spreadComponent(protocols, chains),
    poolCount: poolCountComponent(retained.length),
  };
  let num =
    DEX_WEIGHTS.depth * c.depth +
    DEX_WEIGHTS.concentration * c.concentration +
    DEX_WEIGHTS.spread * c.spread +
    DEX_WEIGHTS.poolCount * c.poolCount;
  let den = DEX_WEIGHTS.depth + DEX_WEIGHTS.concentration + DEX_WEIGHTS.spread + DEX_WEIGHTS.poolCount;
  if (c.activity !== null) {
    num += DEX_WEIGHTS.activity * c.activity;
    den += DEX_WEIGHTS.activity;
  }
  /** Sum of `k` over the retained pools; null when any of them lacks it. */
  const all = (k: "volume24hUsd" | "volume7dUsd") => {
    let sum = 0;
    for (const p of retained) {
      const v = p[k];
      if (v === null) return null;
      sum += v;
    }
    return sum;
  };
  const n = retained.length;
  const warning =
    activityStatus === "activity-missing"
      ? `activity-missing: none of the ${n} retained pool${n === 1 ? "" : "s"} reports a 24 h volume; score from depth, concentration, spread and pool count only (activity weight left out)`
      : activityStatus === "activity-coverage-below-floor"
        ? `activity-coverage-below-floor: pools reporting a 24 h volume hold ${Math.round(coverage * 100)}% of retained TVL (< ${ACTIVITY_COVERAGE_FLOOR * 100}%); activity weight left out`
        : null;
  return {
    score: Math.round(clamp(num / den)),
    components: {
      depth: r2(c.depth),
      activity: c.activity === null ? null : r2(c.activity),
      concentration: r2(c.concentration),
      spread: r2(c.spread),
      poolCount: r2(c.poolCount),
    },
    totalTvlUsd: tvl,
    poolCount: n,
    protocolCount: protocols,
    chainCount: chains,
    hhi: r6(h),
    totalVolume24hUsd: all("volume24hUsd"),
    totalVolume7dUsd: all("volume7dUsd"),
    volumeCoverageShare: r6(coverage),
    activityStatus,
    unavailableReason: null,
    warning,
  };
}

/** TVL breakdown of retained pools by `key` (chain or project), largest first. */
function breakdown(pools: CoinPool[], key: "chain" | "project", total: number) {
  const m = new Map<string, { tvlUsd: number; poolCount: number }>();
  for (const p of pools) {
    const cur = m.get(p[key]) ?? { tvlUsd: 0, poolCount: 0 };
    m.set(p[key], { tvlUsd: cur.tvlUsd + p.tvlUsd, poolCount: cur.poolCount + 1 });
  }
  return [...m.entries()]
    .map(([k, v]) => ({
      [key === "chain" ? "chain" : "protocol"]: k,
      tvlUsd: v.tvlUsd,
      share: total > 0 ? r6(v.tvlUsd / total) : null,
      poolCount: v.poolCount,
    }))
    .sort((a, b) => b.tvlUsd - a.tvlUsd || String(Object.values(a)[0]).localeCompare(String(Object.values(b)[0])));
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** Retained-pool candidates per coin for one day's pools: matched tokens with TVL (and volumes) attributed ÷ token count. */
export function coinPools(pools: Row[], index: ReturnType<typeof buildCoinIndex>): Map<string, CoinPool[]> {
  const out = new Map<string, CoinPool[]>();
  for (const p of pools) {
    const matches = matchPool(matchPoolFrom(p), index);
    const k = matches.length || 1;
    for (const m of matches) {
      if (!m.stablecoinId) continue;
      const list = out.get(m.stablecoinId) ?? [];
      const same = list.find((x) => x.poolId === m.poolId);
      const tvl = Number(p.tvl_usd) / k;
      const v1 = num(p.volume_usd_1d),
        v7 = num(p.volume_usd_7d);
      if (same) {
        same.tvlUsd += tvl;
        same.volume24hUsd = same.volume24hUsd === null || v1 === null ? null : same.volume24hUsd + v1 / k;
        same.volume7dUsd = same.volume7dUsd === null || v7 === null ? null : same.volume7dUsd + v7 / k;
        continue;
      }
      list.push({
        poolId: m.poolId,
        project: String(p.project),
        chain: String(p.chain),
        symbol: String(p.symbol),
        tvlUsd: tvl,
        volume24hUsd: v1 === null ? null : v1 / k,
        volume7dUsd: v7 === null ? null : v7 / k,
        apy: num(p.apy),
        poolMeta: str(p.pool_meta),
      });
      out.set(m.stablecoinId, list);
    }
  }
  return out;
}

/** Input rows of the DEX liquidity node: matching inputs and pool rows as coinPools reads them, by capture `day`. */
type DexLiquidityInputs = {
  coins: Row;
  supplyChains: Row;
  universe: Pick<RegistryCoinRow, "id" | "symbol">;
  pools: Row & { day: string };
};

/** DAG node: `dex_liquidity` (newest capture day) and `dex_liquidity_daily` (every capture day). */
export const dexLiquidityAnalytic: Analytic = {
  name: "dex_liquidity",
  layer: "marts",
  inputs: {
    ...MATCH_INPUTS,
    universe: "select id, symbol from registry_coins where not is_dead order by id",
    pools: `select strftime(observed_day, '%Y-%m-%d') as day, observed_at, pool_id, project, chain_id as chain, symbol, is_stablecoin, underlying_tokens_json,
          tvl_usd, apy, pool_meta, volume_usd_1d, volume_usd_7d
          from int_yield_pools_daily order by observed_day, pool_id`,
  },
  outputs: {
    dex_liquidity: {
      stablecoin_id: "VARCHAR",
      symbol: "VARCHAR",
      liquidity_score: "DOUBLE",
      depth_score: "DOUBLE",
      activity_score: "DOUBLE",
      concentration_score: "DOUBLE",
      spread_score: "DOUBLE",
      pool_count_score: "DOUBLE",
      total_tvl_usd: "DOUBLE",
      pool_count: "BIGINT",
      protocol_count: "BIGINT",
      chain_count: "BIGINT",
      hhi: "DOUBLE",
      total_volume_24h_usd: "DOUBLE",
      total_volume_7d_usd: "DOUBLE",
      volume_coverage_share: "DOUBLE",
      activity_status: "VARCHAR",
      unavailable_reason: "VARCHAR",
      warning: "VARCHAR",
      top_pools_json: "VARCHAR",
      chains_json: "VARCHAR",
      protocols_json: "VARCHAR",
      observed_at: "BIGINT",
      methodology_version: "VARCHAR",
    },
    dex_liquidity_daily: {
      date: "DATE",
      stablecoin_id: "VARCHAR",
      liquidity_score: "DOUBLE",
      total_tvl_usd: "DOUBLE",
      pool_count: "BIGINT",
      hhi: "DOUBLE",
      total_volume_24h_usd: "DOUBLE",
      activity_status: "VARCHAR",
      unavailable_reason: "VARCHAR",
      observed_at: "BIGINT",
      methodology_version: "VARCHAR",
    },
  },
  run(selected) {
    const inputs = inputsAs<DexLiquidityInputs>(selected);
    const index = buildCoinIndex(matchCoinsFrom(inputs.coins, inputs.supplyChains));
    const byDay = new Map<string, Row[]>();
    for (const p of inputs.pools) byDay.set(p.day, [...(byDay.get(p.day) ?? []), p]);
    const days = [...byDay.keys()].sort();
    const current: Row[] = [];
    const daily: Row[] = [];
    for (const day of days) {
      const pools = must(byDay.get(day), `pools of day ${day}`);
      const observedAt = Math.max(...pools.map((p) => Number(p.observed_at)));
      const perCoin = coinPools(pools, index);
      const isLast = day === days.at(-1);
      for (const coin of inputs.universe) {
        const list = perCoin.get(coin.id) ?? [];
        const s = dexLiquidityScore(list);
        daily.push({
          date: day,
          stablecoin_id: coin.id,
          liquidity_score: s.score,
          total_tvl_usd: s.totalTvlUsd,
          pool_count: s.poolCount,
          hhi: s.hhi,
          total_volume_24h_usd: s.totalVolume24hUsd,
          activity_status: s.activityStatus,
          unavailable_reason: s.unavailableReason,
          observed_at: observedAt,
          methodology_version: DEX_LIQUIDITY_VERSION,
        });
        if (!isLast) continue;
        const retained = list
          .filter((p) => p.tvlUsd >= MIN_POOL_TVL_USD)
          .sort((a, b) => b.tvlUsd - a.tvlUsd || a.poolId.localeCompare(b.poolId));
        const top = retained.slice(0, TOP_POOLS).map((p) => ({
          poolId: p.poolId,
          project: p.project,
          chain: p.chain,
          symbol: p.symbol,
          tvlUsd: p.tvlUsd,
          share: s.totalTvlUsd > 0 ? r6(p.tvlUsd / s.totalTvlUsd) : null,
          apy: p.apy,
          poolMeta: p.poolMeta,
          volume24hUsd: p.volume24hUsd,
        }));
        current.push({
          stablecoin_id: coin.id,
          symbol: coin.symbol,
          liquidity_score: s.score,
          depth_score: s.components?.depth ?? null,
          activity_score: s.components?.activity ?? null,
          concentration_score: s.components?.concentration ?? null,
          spread_score: s.components?.spread ?? null,
          pool_count_score: s.components?.poolCount ?? null,
          total_tvl_usd: s.totalTvlUsd,
          pool_count: s.poolCount,
          protocol_count: s.protocolCount,
          chain_count: s.chainCount,
          hhi: s.hhi,
          total_volume_24h_usd: s.totalVolume24hUsd,
          total_volume_7d_usd: s.totalVolume7dUsd,
          volume_coverage_share: s.volumeCoverageShare,
          activity_status: s.activityStatus,
          unavailable_reason: s.unavailableReason,
          warning: s.warning,
          top_pools_json: JSON.stringify(top),
          chains_json: JSON.stringify(breakdown(retained, "chain", s.totalTvlUsd)),
          protocols_json: JSON.stringify(breakdown(retained, "project", s.totalTvlUsd)),
          observed_at: observedAt,
          methodology_version: DEX_LIQUIDITY_VERSION,
        });
      }
    }
    return { tables: { dex_liquidity: current, dex_liquidity_daily: daily } };
  },
};
