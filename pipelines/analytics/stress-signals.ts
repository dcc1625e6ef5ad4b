import {
  DEWS_VERSION,
  DAY,
  type DewsBand,
  SIGNAL_WEIGHTS,
  type SignalName,
  slotDay,
  lastDay,
} from "./stress-signals.version.ts";
import { type Analytic, groupByCoin, inputsAs, type RegistryCoinRow, type Row } from "./contract.ts";
import { must } from "../../lib/must.ts";

/**
 * Depeg early-warning score (DEWS), methodology `ballast-dews-v1`: per coin and per UTC day, a
 * 0-100 stress score from the signals the warehouse really holds. Pure functions; three DAG nodes
 * (`dews_base` here → `stability_index` → `dews` here) because the score and the stability index
 * feed each other (see "Circularity").
 *
 * Day D covers the judged consensus slots ending in (D 00:00, D+1 00:00] UTC, cut at as-of (a slot's
 * end time decides its day, as in `source_quality_daily`); supply is the latest accepted point at or
 * before the window's end. A build as of T therefore reads nothing after T, and the as-of day
 * itself has no window (the newest row is the day ending at as-of).
 *
 * Signals (value 0-100, weight) — a signal without input that day is unavailable, never zero:
 * - `supplyVelocity` 0.25: contraction only, native units (a price fall is not a supply fall).
 *   1-day contraction on (0%,0) (1,15) (3,40) (5,65) (10,85) (20,100), 7-day on (0,0) (3,15) (7,40)
 *   (15,70) (30,100); 0.6 × 1-day + 0.4 × 7-day (one alone when the other day has no point), times
 *   min(1, log10(max(mcap, $1M) / $1M) / 3). Unavailable without the end point and a point exactly
 *   1 or 7 days earlier.
 * - `priceConfidence` 0.15: consensus label of the day's last slot: high 0, single-source 25, low 60,
 *   fallback 80, a slot without price 100; +15 (cap 100) when the label is worse than the previous
 *   day's. Unavailable on a day without any slot (an archive gap is not a missing price).
 * - `divergence` 0.15: the day's largest |deviation| from the peg reference (bps) on (0,0) (25,10)
 *   (50,25) (75,50) (100,75) (200,90) (500,100), × 0.7 for non-USD pegs. Unavailable without a
 *   judged slot that day.
 * - `blacklist` 0.10: coins with a tracked freeze contract, on days inside the coin's recorded
 *   on-chain coverage (first to last day of its freeze or mint/burn records): freezes that day
 *   ÷ max(1, mean freezes per day over the 7 days before) on (0,0) (1,10) (2,30) (5,70) (10,100).
 * - `mintBurnFlow` 0.10: coins with mint/burn records, inside their coverage with ≥ 7 covered days
 *   in the 30 before: 0.6 × burn surge (burns that day ÷ mean daily burns of those days, native
 *   units) on (1,0) (2,30) (4,70) (8,100) + 0.4 × burn share burns ÷ (mints + burns) on (0.5,0)
 *   (0.7,40) (0.9,80) (1,100).
 * - `poolDrift` 0.20, `liquidityErosion` 0.15, `yield` 0.05: no input in this warehouse (no DEX
 *   pool or yield history): always unavailable.
 *
 * base = Σ w·S / Σ w over available signals; no row when Σ w < 0.30. A score above 35 is capped at
 * 35 (WATCH) unless market-price evidence (divergence ≥ 10) or a severe blacklist signal (≥ 70)
 * backs it: supply and flows alone never raise an alert.
 *
 * Circularity: pass 1 (`dews_base_daily`) is the capped base and its band. The stability index of
 * day D takes its stress breadth from the base bands of D. Pass 2 (`dews_daily`) amplifies the
 * base: `psiAmp = 1 + (75 − PSI)/75 × 0.3` when that day's PSI < 75 (1 when PSI is null), and
 * contagion = 1.15 when another coin of the same peg type has a DANGER base band that day, 1.08 for
 * WARNING (the larger, never the coin itself); product capped at 1.2 overall for contagion;
 * score = round(clamp(base × psiAmp × contagion, 0, 100)), then the evidence cap again.
 *
 * Excluded: NAV tokens and floating pegs (no fixed reference), and a dead coin (registry, as judged
 * at as-of) from 30 days after its death period ended (its collapse counts, a long-dead price does not).
 *
 * Version: `DEWS_VERSION`, its label, bands and signal weights (./stress-signals.version.ts).
 */
export const MIN_AVAILABLE_WEIGHT = 0.3;
export const WATCH_CAP = 35;

/** Band of a score (rounded first): CALM 0-15, WATCH 16-35, ALERT 36-55, WARNING 56-75, DANGER 76-100. */
export function dewsBand(score: number): DewsBand {
  const s = Math.round(score);
  return s <= 15 ? "CALM" : s <= 35 ? "WATCH" : s <= 55 ? "ALERT" : s <= 75 ? "WARNING" : "DANGER";
}

/** One signal of a coin-day: value 0-100 (null when unavailable), its weight, and why it is unavailable. */
export interface Signal {
  value: number | null;
  weight: number;
  available: boolean;
  reason?: string;
  inputs?: Record<string, number | string | null>;
}

type Curve = readonly (readonly [number, number])[];
/** Piecewise-linear curve through `points` (ascending x), flat beyond both ends. */
export function curve(points: Curve, x: number): number {
  if (x <= points[0][0]) return points[0][1];
  for (let i = 1; i < points.length; i++) {
    const [x1, y1] = points[i];
    if (x <= x1) {
      const [x0, y0] = points[i - 1];
      return y0 + ((y1 - y0) * (x - x0)) / (x1 - x0);
    }
  }
  return points[points.length - 1][1];
}
export const SUPPLY_1D: Curve = [
  [0, 0],
  [1, 15],
  [3, 40],
  [5, 65],
  [10, 85],
  [20, 100],
];
export const SUPPLY_7D: Curve = [
  [0, 0],
  [3, 15],
  [7, 40],
  [15, 70],
  [30, 100],
];
export const DIVERGENCE: Curve = [
  [0, 0],
  [25, 10],
  [50, 25],
  [75, 50],
  [100, 75],
  [200, 90],
  [500, 100],
];
export const BLACKLIST_SPIKE: Curve = [
  [0, 0],
  [1, 10],
  [2, 30],
  [5, 70],
  [10, 100],
];
export const BURN_SURGE: Curve = [
  [1, 0],
  [2, 30],
  [4, 70],
  [8, 100],
];
export const BURN_SHARE: Curve = [
  [0.5, 0],
  [0.7, 40],
  [0.9, 80],
  [1, 100],
];
const CONFIDENCE_POINTS: Record<string, number> = { high: 0, "single-source": 25, low: 60, fallback: 80 };

const r2 = (x: number) => Math.round(x * 100) / 100;

/** Inputs of one coin-day (amounts: native units for velocity and flows, USD for mcap). */
export interface DewsDayInput {
  pegCurrency: string;
  mcapUsd: number | null;
  supplyNow: number | null;
  supplyPrevDay: number | null;
  supplyPrevWeek: number | null;
  /** Largest |deviation| (bps) of the day's judged slots; null without one. */
  worstAbsBps: number | null;
  /** Label of the day's last slot (`null` label: the slot had no price); undefined: no slot that day. */
  confidence?: string | null;
  prevConfidence?: string | null;
  /** Freezes that day and mean per day over the 7 days before; null: not tracked or outside coverage. */
  blacklist: { count: number; avgPrev7: number } | null;
  /** Burns/mints that day and mean daily burns over covered baseline days; null when not available. */
  flow: { burned: number; minted: number; meanBurn: number; baselineDays: number } | null;
}

const unavailable = (name: SignalName, reason: string): Signal => ({
  value: null,
  weight: SIGNAL_WEIGHTS[name],
  available: false,
  reason,
});
const signal = (name: SignalName, value: number, inputs?: Signal["inputs"]): Signal => ({
  value: r2(Math.max(0, Math.min(100, value))),
  weight: SIGNAL_WEIGHTS[name],
  available: true,
  ...(inputs ? { inputs } : {}),
});

/** Every signal of one coin-day. */
export function dewsSignals(d: DewsDayInput): Record<SignalName, Signal> {
  // supply velocity
  let supplyVelocity: Signal;
  const pct = (prev: number | null) =>
    d.supplyNow !== null && prev !== null && prev > 0 ? ((d.supplyNow - prev) / prev) * 100 : null;
  const c1 = pct(d.supplyPrevDay),
    c7 = pct(d.supplyPrevWeek);
  if (c1 === null && c7 === null) supplyVelocity = unavailable("supplyVelocity", "no-supply-history");
  else {
    const n1 = c1 === null ? null : curve(SUPPLY_1D, Math.max(0, -c1));
    const n7 = c7 === null ? null : curve(SUPPLY_7D, Math.max(0, -c7));
    // One of them is known here (both unknown is handled above).
    const mix = n1 !== null && n7 !== null ? 0.6 * n1 + 0.4 * n7 : (n1 ?? n7 ?? 0);
    const scale = Math.min(1, Math.log10(Math.max(d.mcapUsd ?? 0, 1e6) / 1e6) / 3);
    supplyVelocity = signal("supplyVelocity", mix * scale, {
      change1dPct: c1 === null ? null : r2(c1),
      change7dPct: c7 === null ? null : r2(c7),
    });
  }
  // price confidence
  let priceConfidence: Signal;
  if (d.confidence === undefined) priceConfidence = unavailable("priceConfidence", "no-quote-that-day");
  else {
    const pts = (l: string | null | undefined) => (l === null || l === undefined ? 100 : (CONFIDENCE_POINTS[l] ?? 100));
    const degraded = d.prevConfidence !== undefined && pts(d.confidence) > pts(d.prevConfidence);
    priceConfidence = signal("priceConfidence", pts(d.confidence) + (degraded ? 15 : 0), {
      label: d.confidence ?? "no-price",
    });
  }
  const divergence =
    d.worstAbsBps === null
      ? unavailable("divergence", "no-judged-price-that-day")
      : signal("divergence", curve(DIVERGENCE, d.worstAbsBps) * (d.pegCurrency === "USD" ? 1 : 0.7), {
          worstAbsBps: d.worstAbsBps,
        });
  const blacklist =
    d.blacklist === null
      ? unavailable("blacklist", "not-tracked-or-outside-coverage")
      : signal("blacklist", curve(BLACKLIST_SPIKE, d.blacklist.count / Math.max(1, d.blacklist.avgPrev7)), {
          freezes: d.blacklist.count,
          avgPrev7: r2(d.blacklist.avgPrev7),
        });
  let mintBurnFlow: Signal;
  if (d.flow === null) mintBurnFlow = unavailable("mintBurnFlow", "no-flow-records");
  else if (d.flow.baselineDays < 7) mintBurnFlow = unavailable("mintBurnFlow", "baseline-under-7-days");
  else {
    const f = d.flow;
    const surge = f.burned === 0 ? 0 : f.meanBurn > 0 ? f.burned / f.meanBurn : Infinity;
    const share = f.burned + f.minted > 0 ? f.burned / (f.burned + f.minted) : 0;
    mintBurnFlow = signal("mintBurnFlow", 0.6 * curve(BURN_SURGE, surge) + 0.4 * curve(BURN_SHARE, share), {
      burnSurge: Number.isFinite(surge) ? r2(surge) : "no-baseline-burns",
      burnShare: r2(share),
    });
  }
  return {
    supplyVelocity,
    poolDrift: unavailable("poolDrift", "no-dex-pool-input"),
    liquidityErosion: unavailable("liquidityErosion", "no-dex-liquidity-input"),
    priceConfidence,
    divergence,
    blacklist,
    mintBurnFlow,
    yield: unavailable("yield", "no-yield-input"),
  };
}

/** Weighted mean over available signals, or null when their weight is below MIN_AVAILABLE_WEIGHT. */
export function dewsBase(signals: Record<SignalName, Signal>): { base: number | null; availableWeight: number } {
  let w = 0,
    sum = 0;
  for (const s of Object.values(signals))
    if (s.available) {
      w += s.weight;
      sum += s.weight * (s.value ?? 0); // an available signal has a value
    }
  const availableWeight = Math.round(w * 1000) / 1000;
  return { base: availableWeight < MIN_AVAILABLE_WEIGHT ? null : sum / w, availableWeight };
}

/** Caps a score above 35 at 35 unless market-price (divergence ≥ 10) or severe blacklist (≥ 70) evidence backs it. */
export function evidenceCap(score: number, signals: Record<SignalName, Signal>): number {
  const market = (signals.divergence.value ?? 0) >= 10;
  const severeBlacklist = (signals.blacklist.value ?? 0) >= 70;
  return score > WATCH_CAP && !market && !severeBlacklist ? WATCH_CAP : score;
}

/** PSI amplifier: 1 + (75 − PSI)/75 × 0.3 below 75; 1 when PSI is null or ≥ 75. */
export function psiAmplifier(psi: number | null): number {
  return psi === null || psi >= 75 ? 1 : 1 + ((75 - psi) / 75) * 0.3;
}

/** Contagion amplifier of a coin from other same-peg coins' base bands: DANGER 1.15, WARNING 1.08 (max), capped at 1.2. */
export function contagionAmplifier(otherBands: DewsBand[]): number {
  const a = otherBands.includes("DANGER") ? 1.15 : otherBands.includes("WARNING") ? 1.08 : 1;
  return Math.min(1.2, a);
}

/** Final score: round(clamp(base × psiAmp × contagion, 0, 100)) with the evidence cap. */
export function dewsFinal(
  base: number,
  psiAmp: number,
  contagion: number,
  signals: Record<SignalName, Signal>,
): number {
  return Math.round(evidenceCap(Math.max(0, Math.min(100, base * psiAmp * contagion)), signals));
}

// ---------------------------------------------------------------------------------------------------
// DAG nodes

export const isoDay = (ts: number) => new Date(ts * 1000).toISOString().slice(0, 10);

/** Days a dead coin stays in the universe after its death period ends: the collapse counts, a long-dead price does not. */
export const DEATH_GRACE_DAYS = 30;
/** Death periods already computed, by death date (the universes ask once per coin and day). */
const deathPeriods = new Map<string, Readonly<{ start: number; end: number }>>();

/** [start, end) (Unix s) of a death date `YYYY`, `YYYY-MM` or `YYYY-MM-DD`; null when alive. */
export function deathPeriod(deadFrom: string | null): Readonly<{ start: number; end: number }> | null {
  if (!deadFrom) return null;
  const known = deathPeriods.get(deadFrom);
  if (known) return known;
  const [y, m, day] = deadFrom.split("-").map(Number);
  const start = Date.UTC(y, (m || 1) - 1, day || 1) / 1000;
  const end = (day ? Date.UTC(y, m - 1, day + 1) : m ? Date.UTC(y, m, 1) : Date.UTC(y + 1, 0, 1)) / 1000;
  const period = { start, end };
  deathPeriods.set(deadFrom, period);
  return period;
}
/** Whether a coin has left the universe by day `d`: DEATH_GRACE_DAYS after its death period ended. */
export function deadBefore(deadFrom: string | null, d: number): boolean {
  const p = deathPeriod(deadFrom);
  return p !== null && p.end + DEATH_GRACE_DAYS * DAY <= d;
}
/** Whether day `d` lies around a coin's death: from DEATH_GRACE_DAYS before its death period to its exit from the universe. */
export function aroundDeath(deadFrom: string | null, d: number): boolean {
  const p = deathPeriod(deadFrom);
  return p !== null && d >= p.start - DEATH_GRACE_DAYS * DAY && !deadBefore(deadFrom, d);
}

interface SupplyPoint {
  dayTs: number;
  usd: number | null;
  native: number | null;
}
/** Latest point at or before `ts` (ascending list), at most `maxAgeDays` old. */
export function pointAt<T extends { dayTs: number }>(list: T[], ts: number, maxAgeDays: number): T | null {
  let lo = 0,
    hi = list.length - 1,
    found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid].dayTs <= ts) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found >= 0 && list[found].dayTs >= ts - maxAgeDays * DAY ? list[found] : null;
}
const exactAt = (byDay: Map<number, SupplyPoint>, ts: number) => byDay.get(ts) ?? null;

/** Input rows of DEWS pass 1 (columns of its selects). */
type DewsBaseInputs = {
  coins: Pick<
    RegistryCoinRow,
    "id" | "symbol" | "peg_type" | "peg_currency" | "nav_token" | "floating_peg" | "dead_from"
  >;
  slots: { stablecoin_id: string; ts: number; bps: number | null; confidence: string | null; priced: boolean };
  supply: {
    stablecoin_id: string;
    day_ts: number;
    circulating_usd: number | string | null;
    circulating_native: number | string | null;
  };
  tracked: { stablecoin_id: string };
  freezes: { stablecoin_id: string; day_ts: number; n: number };
  flows: { stablecoin_id: string; day_ts: number; minted: number | null; burned: number | null };
};

/** Pass 1: capped base score per coin-day (`dews_base_daily`). */
export const dewsBaseAnalytic: Analytic = {
  name: "dews_base",
  layer: "marts",
  inputs: {
    coins:
      "select id, symbol, peg_type, peg_currency, nav_token, floating_peg, dead_from from registry_coins order by id",
    slots: `select stablecoin_id, slot_ts::bigint::double as ts, deviation_bps::double as bps, price_confidence as confidence, price is not null as priced
          from price_consensus_slots order by stablecoin_id, slot_ts`,
    supply: `select stablecoin_id, epoch(date)::bigint::double as day_ts, circulating_usd, circulating_native
          from supply_history_daily order by stablecoin_id, date`,
    tracked:
      "select distinct stablecoin_id from registry_tracked_contracts where purpose = 'freeze' order by stablecoin_id",
    freezes: `select stablecoin_id, (ts - ts % 86400)::bigint::double as day_ts, count(*) filter (where event_type = 'blacklist')::double as n
          from blacklist_events group by all order by stablecoin_id, day_ts`,
    flows: `select stablecoin_id, epoch(date)::bigint::double as day_ts, minted_native::double as minted, burned_native::double as burned
          from mint_burn_daily order by stablecoin_id, date`,
  },
  outputs: {
    dews_base_daily: {
      stablecoin_id: "VARCHAR",
      date: "DATE",
      peg_type: "VARCHAR",
      base_score: "DOUBLE",
      base_band: "VARCHAR",
      available_weight: "DOUBLE",
      mcap_usd: "DOUBLE",
      signals_json: "VARCHAR",
    },
  },
  run(selected, { asOf }) {
    const inputs = inputsAs<DewsBaseInputs>(selected);
    const slotsBy = groupByCoin(inputs.slots),
      supplyBy = groupByCoin(inputs.supply),
      freezesBy = groupByCoin(inputs.freezes),
      flowsBy = groupByCoin(inputs.flows);
    const tracked = new Set(inputs.tracked.map((r) => r.stablecoin_id));
    const end = lastDay(asOf);
    const out: Row[] = [];
    for (const c of inputs.coins) {
      if (c.nav_token || c.floating_peg) continue;
      const id = c.id;
      // days of the coin: slots by day
      const days = new Map<number, { worst: number | null; conf: string | null; lastTs: number }>();
      for (const s of slotsBy.get(id) ?? []) {
        const d = slotDay(s.ts);
        if (d > end) continue;
        const cur = days.get(d) ?? { worst: null, conf: null, lastTs: -Infinity };
        if (s.bps !== null && (cur.worst === null || Math.abs(s.bps) > cur.worst)) cur.worst = Math.abs(s.bps);
        if (s.ts >= cur.lastTs) {
          cur.lastTs = s.ts;
          cur.conf = s.priced ? s.confidence : null;
        }
        days.set(d, cur);
      }
      const supply: SupplyPoint[] = (supplyBy.get(id) ?? []).map((r) => ({
        dayTs: r.day_ts,
        usd: r.circulating_usd === null ? null : Number(r.circulating_usd),
        native: r.circulating_native === null ? null : Number(r.circulating_native),
      }));
      const supplyByDay = new Map(supply.map((p) => [p.dayTs, p]));
      for (const p of supply)
        if (p.dayTs - DAY <= end && p.dayTs - DAY >= 0 && !days.has(p.dayTs - DAY))
          days.set(p.dayTs - DAY, { worst: null, conf: null, lastTs: -Infinity });
      const freezes = new Map((freezesBy.get(id) ?? []).map((r) => [r.day_ts, Number(r.n)]));
      const flows = new Map(
        (flowsBy.get(id) ?? []).map((r) => [r.day_ts, { minted: Number(r.minted), burned: Number(r.burned) }]),
      );
      const onchainDays = [...freezes.keys(), ...flows.keys()];
      const covFrom = onchainDays.length ? Math.min(...onchainDays) : Infinity,
        covTo = onchainDays.length ? Math.max(...onchainDays) : -Infinity;
      const flowDays = [...flows.keys()];
      const flowFrom = flowDays.length ? Math.min(...flowDays) : Infinity,
        flowTo = flowDays.length ? Math.max(...flowDays) : -Infinity;
      if (tracked.has(id))
        for (let d = covFrom; d <= Math.min(covTo, end); d += DAY)
          if (!days.has(d)) days.set(d, { worst: null, conf: null, lastTs: -Infinity });
      let prevConf: string | null | undefined;
      for (const d of [...days.keys()].sort((a, b) => a - b)) {
        if (deadBefore(c.dead_from, d)) continue;
        const day = must(days.get(d), `DEWS day ${d}`);
        const windowEnd = Math.min(d + DAY, asOf);
        const hasSlot = day.lastTs > -Infinity;
        const now = pointAt(supply, windowEnd, 7);
        const nowDay = now?.dayTs ?? null;
        let blacklist: DewsDayInput["blacklist"] = null;
        if (tracked.has(id) && d >= covFrom && d <= covTo) {
          let prev = 0;
          for (let k = 1; k <= 7; k++) prev += freezes.get(d - k * DAY) ?? 0;
          blacklist = { count: freezes.get(d) ?? 0, avgPrev7: prev / 7 };
        }
        let flow: DewsDayInput["flow"] = null;
        if (d >= flowFrom && d <= flowTo) {
          let n = 0,
            burns = 0;
          for (let k = 1; k <= 30; k++) {
            const t = d - k * DAY;
            if (t < flowFrom) break;
            n++;
            burns += flows.get(t)?.burned ?? 0;
          }
          const today = flows.get(d) ?? { minted: 0, burned: 0 };
          flow = { burned: today.burned, minted: today.minted, meanBurn: n ? burns / n : 0, baselineDays: n };
        }
        const signals = dewsSignals({
          pegCurrency: c.peg_currency,
          mcapUsd: now?.usd ?? null,
          supplyNow: now?.native ?? null,
          supplyPrevDay: nowDay === null ? null : (exactAt(supplyByDay, nowDay - DAY)?.native ?? null),
          supplyPrevWeek: nowDay === null ? null : (exactAt(supplyByDay, nowDay - 7 * DAY)?.native ?? null),
          worstAbsBps: day.worst,
          ...(hasSlot ? { confidence: day.conf } : {}),
          ...(prevConf !== undefined ? { prevConfidence: prevConf } : {}),
          blacklist,
          flow,
        });
        if (hasSlot) prevConf = day.conf;
        const { base, availableWeight } = dewsBase(signals);
        if (base === null) continue;
        const capped = evidenceCap(base, signals);
        out.push({
          stablecoin_id: id,
          date: isoDay(d),
          peg_type: c.peg_type,
          base_score: r2(capped),
          base_band: dewsBand(capped),
          available_weight: availableWeight,
          mcap_usd: now?.usd ?? null,
          signals_json: JSON.stringify(signals),
        });
      }
    }
    return { tables: { dews_base_daily: out } };
  },
};

/** Input rows of DEWS pass 2 (columns of its selects). */
type DewsInputs = {
  base: {
    stablecoin_id: string;
    date: string;
    peg_type: string;
    base_score: number;
    base_band: string;
    available_weight: number;
    mcap_usd: number | null;
    signals_json: string;
  };
  psi: { date: string; score: number | null };
};

/** Pass 2: amplified DEWS (`dews_daily`) from the base rows and the stability index of the same day. */
export const dewsAnalytic: Analytic = {
  name: "dews",
  layer: "marts",
  inputs: {
    base: `select stablecoin_id, strftime(date, '%Y-%m-%d') as date, peg_type, base_score, base_band, available_weight, mcap_usd, signals_json
          from dews_base_daily order by date, stablecoin_id`,
    psi: "select strftime(date, '%Y-%m-%d') as date, score from stability_index_daily order by date",
  },
  outputs: {
    dews_daily: {
      stablecoin_id: "VARCHAR",
      date: "DATE",
      score: "BIGINT",
      band: "VARCHAR",
      base_score: "DOUBLE",
      psi_amplifier: "DOUBLE",
      contagion_amplifier: "DOUBLE",
      signals_json: "VARCHAR",
      available_weight: "DOUBLE",
      mcap_usd: "DOUBLE",
      methodology_version: "VARCHAR",
    },
  },
  run(selected) {
    const inputs = inputsAs<DewsInputs>(selected);
    const psi = new Map(inputs.psi.map((r) => [r.date, r.score === null ? null : Number(r.score)]));
    const byDate = new Map<string, DewsInputs["base"][]>();
    for (const r of inputs.base) {
      const a = byDate.get(r.date);
      if (a) a.push(r);
      else byDate.set(r.date, [r]);
    }
    const out: Row[] = [];
    for (const [date, rows] of byDate) {
      const pa = psiAmplifier(psi.get(date) ?? null);
      // per peg type: how many coins have each base band that day (a coin never amplifies itself)
      const counts = new Map<string, Record<string, number>>();
      for (const r of rows) {
        const c = counts.get(r.peg_type) ?? {};
        c[r.base_band] = (c[r.base_band] ?? 0) + 1;
        counts.set(r.peg_type, c);
      }
      for (const r of rows) {
        const c = must(counts.get(r.peg_type), `band counts of ${r.peg_type}`);
        const others = (["DANGER", "WARNING"] as const).filter((b) => (c[b] ?? 0) - (r.base_band === b ? 1 : 0) > 0);
        const ca = contagionAmplifier(others);
        const raw = Number(r.base_score) * pa * ca;
        // the evidence cap only matters above 35: parse the signals only then
        const score =
          raw > WATCH_CAP
            ? dewsFinal(Number(r.base_score), pa, ca, JSON.parse(r.signals_json))
            : Math.round(Math.max(0, raw));
        out.push({
          stablecoin_id: r.stablecoin_id,
          date,
          score,
          band: dewsBand(score),
          base_score: Number(r.base_score),
          psi_amplifier: Math.round(pa * 1000) / 1000,
          contagion_amplifier: ca,
          signals_json: r.signals_json,
          available_weight: Number(r.available_weight),
          mcap_usd: r.mcap_usd === null ? null : Number(r.mcap_usd),
          methodology_version: DEWS_VERSION,
        });
      }
    }
    return { tables: { dews_daily: out } };
  },
};
