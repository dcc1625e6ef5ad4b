import { PSI_VERSION, type PsiBand, psiBand } from "./stability-index.version.ts";
import { type Analytic, inputsAs, type RegistryCoinRow, type Row } from "./contract.ts";
import { aroundDeath, deadBefore, isoDay, pointAt } from "./stress-signals.ts";
import { DAY, lastDay, slotDay } from "./stress-signals.version.ts";
import { must } from "../../lib/must.ts";

/**
 * Stability index (PSI), methodology `ballast-stability-index-v1`: one 0-100 reading of the whole
 * tracked stablecoin market per UTC day, for every day from the first judged price the warehouse
 * holds to the day ending at as-of. Pure functions plus one DAG node (`stability_index`).
 *
 * score = clamp(100 − severity − breadth − stressBreadth + trend, 0, 100), one decimal; components two.
 * - Day D covers (D 00:00, D+1 00:00] UTC cut at as-of, like DEWS (a slot's end decides its day).
 * - Universe: every coin with an accepted supply point (supply_history_daily, USD) at or before the
 *   window's end and at most 7 days old, until 30 days after its death period ended (registry). totalMcap = their sum
 *   (plus contributors valued by the cemetery fallback below). Null score when totalMcap ≤ 0.
 * - Contributors: judged coins (no NAV tokens, no floating pegs) with a depeg incident
 *   (`depeg_incidents`) open at some point of the window; bps = the day's largest |deviation| among
 *   the coin's judged slots inside the incident (else its latest judged slot ≤ the window end within
 *   36 h after the start; none → not a contributor: no evidence that day). mcap = the coin's supply
 *   point as above. A coin without one that the registry knows dead at as-of uses, from 30 days
 *   before its death period to 30 days after it, the cemetery's recorded peak market cap × that
 *   day's price ratio (1 + bps/10000) (`mcapBasis: cemetery-peak`: the only recorded size of UST in
 *   May 2022; an estimate, added to totalMcap too); else its mcap is null and it weighs nothing
 *   (listed, `mcapBasis: unknown`).
 * - Depreciation per coin: factor = 1 when ageDays ≤ 30, else max(0.25, 1 − (ageDays − 30)/120);
 *   age from the earliest start among the coin's incidents open in the window, to the window's end.
 * - severity = min(68, Σ |bps|/100 × mcap/totalMcap × log2(1 + mcap/1e9) × 60 × factor).
 * - breadth = min(17, Σ sqrt(mcap/1e9) × 3 × factor).
 * - stressBreadth = min(5, Σ sqrt(mcap/1e9) × 1.5) over that day's DEWS base rows (pass 1) banded
 *   ALERT, WARNING or DANGER (the base, not the amplified score, which itself reads PSI).
 * - trend = clamp(7-day % change of the paired universe, −5, 5): coins with a point at the window's
 *   end and one at or before 7 days earlier (each ≤ 7 days old); 0 when no coin pairs.
 * Bands (inclusive lower bounds): BEDROCK ≥ 90, STEADY ≥ 75, TREMOR ≥ 60, FRACTURE ≥ 40,
 * CRISIS ≥ 20, MELTDOWN < 20.
 *
 * Version: `PSI_VERSION`, its label and bands (./stability-index.version.ts).
 */

/** Depreciation of an old open incident: 1 up to 30 days, then linear to a floor of 0.25 at 120 days. */
export function depreciation(ageDays: number): number {
  return ageDays <= 30 ? 1 : Math.max(0.25, 1 - (ageDays - 30) / 120);
}

export interface PsiContributor {
  id: string;
  symbol: string;
  bps: number;
  mcapUsd: number | null;
  ageDays: number;
  factor: number;
  mcapBasis: "supply" | "cemetery-peak" | "unknown";
}
export interface PsiComponents {
  severity: number;
  breadth: number;
  stressBreadth: number;
  trend: number;
}

const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;

/**
 * The index from its inputs: contributors (mcap null weighs nothing), total market cap, the mcaps of
 * stressed DEWS rows, and the paired 7-day change (%; null → 0). Null score when totalMcap is
 * missing or ≤ 0.
 */
export function stabilityIndex(
  contributors: PsiContributor[],
  totalMcap: number | null,
  stressedMcaps: number[],
  mcap7dChangePct: number | null,
): { score: number | null; band: PsiBand | null; components: PsiComponents } {
  let sev = 0,
    br = 0;
  if (totalMcap !== null && totalMcap > 0) {
    for (const c of contributors) {
      if (c.mcapUsd === null || !(c.mcapUsd > 0)) continue;
      sev += (Math.abs(c.bps) / 100) * (c.mcapUsd / totalMcap) * Math.log2(1 + c.mcapUsd / 1e9) * 60 * c.factor;
      br += Math.sqrt(c.mcapUsd / 1e9) * 3 * c.factor;
    }
  }
  const components: PsiComponents = {
    severity: r2(Math.min(68, sev)),
    breadth: r2(Math.min(17, br)),
    stressBreadth: r2(
      Math.min(
        5,
        stressedMcaps.reduce((s, m) => s + (m > 0 ? Math.sqrt(m / 1e9) * 1.5 : 0), 0),
      ),
    ),
    trend: r2(Math.max(-5, Math.min(5, mcap7dChangePct ?? 0))),
  };
  if (totalMcap === null || !(totalMcap > 0)) return { score: null, band: null, components };
  const score = r1(
    Math.max(
      0,
      Math.min(100, 100 - Math.min(68, sev) - Math.min(17, br) - components.stressBreadth + components.trend),
    ),
  );
  return { score, band: psiBand(score), components };
}

const STALE_SEC = 36 * 3600;

/** Input rows of the stability index (columns of its selects). */
interface StabilityIndexInputs {
  coins: Pick<RegistryCoinRow, "id" | "symbol" | "nav_token" | "floating_peg" | "dead_from" | "peak_mcap_usd">;
  slots: { stablecoin_id: string; ts: number; bps: number };
  incidents: { stablecoin_id: string; started_at: number; ended_at: number | null };
  supply: { stablecoin_id: string; day_ts: number; circulating_usd: number };
  stressed: { date: string; mcap_usd: number };
}

/** A depeg incident of one coin: started_at and ended_at (Unix s; null while open). */
interface Incident {
  start: number;
  end: number | null;
}

/**
 * The incidents of one coin that are open on successive days, swept forward: an incident joins when
 * it starts and leaves for good once it is over, so a day costs the incidents open on it, not every
 * incident of the coin (the daily index was quadratic in history length).
 */
class OpenIncidents {
  /** Indices into `list` by start (ties in list order). */
  private readonly byStart: number[];
  private started = 0;
  /** Indices of the started incidents not over yet, ascending. */
  private live: number[] = [];

  constructor(private readonly list: Incident[]) {
    this.byStart = list.map((_, i) => i).sort((a, b) => list[a].start - list[b].start || a - b);
  }

  /**
   * The incidents with start ≤ `end` not over by `d` (ended_at null or after `d`), in list order.
   * `d` and `end` (Unix s) must not decrease from one call to the next.
   */
  openAt(d: number, end: number): Incident[] {
    const before = this.started;
    while (this.started < this.byStart.length && this.list[this.byStart[this.started]].start <= end)
      this.live.push(this.byStart[this.started++]);
    if (this.started > before) this.live.sort((a, b) => a - b);
    this.live = this.live.filter((i) => {
      const over = this.list[i].end;
      return over === null || over > d;
    });
    return this.live.map((i) => this.list[i]);
  }
}

/** Index of the first of `slots` (ascending `ts`) after `t`; `slots.length` when none is. */
function firstAfter(slots: readonly { ts: number }[], t: number): number {
  let lo = 0,
    hi = slots.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (slots[mid].ts <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The index as a DAG node: writes `stability_index_daily`. */
export const stabilityIndexAnalytic: Analytic = {
  name: "stability_index",
  layer: "marts",
  inputs: {
    coins: "select id, symbol, nav_token, floating_peg, dead_from, peak_mcap_usd from registry_coins order by id",
    slots: `select stablecoin_id, slot_ts::bigint::double as ts, deviation_bps::double as bps from price_consensus_slots
          where deviation_bps is not null order by stablecoin_id, slot_ts`,
    incidents: `select stablecoin_id, started_at::double as started_at, ended_at::double as ended_at from depeg_incidents
          order by stablecoin_id, started_at`,
    supply: `select stablecoin_id, epoch(date)::bigint::double as day_ts, circulating_usd from supply_history_daily
          where circulating_usd is not null order by stablecoin_id, date`,
    stressed: `select strftime(date, '%Y-%m-%d') as date, mcap_usd from dews_base_daily
          where base_band in ('ALERT', 'WARNING', 'DANGER') and mcap_usd is not null order by date, stablecoin_id`,
  },
  outputs: {
    stability_index_daily: {
      date: "DATE",
      score: "DOUBLE",
      band: "VARCHAR",
      severity: "DOUBLE",
      breadth: "DOUBLE",
      stress_breadth: "DOUBLE",
      trend: "DOUBLE",
      total_mcap_usd: "DOUBLE",
      contributors_json: "VARCHAR",
      methodology_version: "VARCHAR",
    },
  },
  run(selected, { asOf }) {
    const inputs = inputsAs<StabilityIndexInputs>(selected);
    const coins = new Map(inputs.coins.map((c) => [c.id, c]));
    const supply = new Map<string, { dayTs: number; usd: number }[]>();
    for (const r of inputs.supply) {
      const a = supply.get(r.stablecoin_id) ?? [];
      a.push({ dayTs: r.day_ts, usd: Number(r.circulating_usd) });
      supply.set(r.stablecoin_id, a);
    }
    const slots = new Map<string, { ts: number; bps: number }[]>();
    for (const r of inputs.slots) {
      const a = slots.get(r.stablecoin_id) ?? [];
      a.push({ ts: r.ts, bps: r.bps });
      slots.set(r.stablecoin_id, a);
    }
    const byCoin = new Map<string, Incident[]>();
    for (const r of inputs.incidents) {
      const c = coins.get(r.stablecoin_id);
      if (!c || c.nav_token || c.floating_peg) continue;
      const a = byCoin.get(r.stablecoin_id) ?? [];
      a.push({ start: r.started_at, end: r.ended_at });
      byCoin.set(r.stablecoin_id, a);
    }
    const incidents = new Map([...byCoin].map(([id, list]) => [id, new OpenIncidents(list)]));
    const stressed = new Map<string, number[]>();
    for (const r of inputs.stressed) {
      const a = stressed.get(r.date) ?? [];
      a.push(Number(r.mcap_usd));
      stressed.set(r.date, a);
    }
    const firstSlot = inputs.slots.reduce((m, s) => Math.min(m, s.ts), Number.POSITIVE_INFINITY); // no spread: slots can exceed the call-stack argument limit
    const out: Row[] = [];
    if (!Number.isFinite(firstSlot)) return { tables: { stability_index_daily: out } };
    for (let d = slotDay(firstSlot); d <= lastDay(asOf); d += DAY) {
      const end = Math.min(d + DAY, asOf);
      let total = 0,
        cur = 0,
        prev = 0,
        any = false;
      for (const [id, pts] of supply) {
        if (deadBefore(coins.get(id)?.dead_from ?? null, d)) continue;
        const now = pointAt(pts, end, 7);
        if (!now) continue;
        total += now.usd;
        any = true;
        const before = pointAt(pts, end - 7 * DAY, 7);
        if (before && before.usd > 0) {
          cur += now.usd;
          prev += before.usd;
        }
      }
      const contributors: PsiContributor[] = [];
      for (const [id, list] of incidents) {
        // Incidents were kept only for listed coins (above).
        const coin = must(coins.get(id), `registry coin ${id}`);
        if (deadBefore(coin.dead_from, d)) continue;
        const open = list.openAt(d, end);
        if (!open.length) continue;
        const inIncident = (ts: number) => open.some((i) => ts >= i.start && (i.end === null || ts <= i.end));
        let bps: number | null = null;
        const coinSlots = slots.get(id) ?? [];
        // the coin's slots in (d, end], in time order
        for (let k = firstAfter(coinSlots, d); k < coinSlots.length && coinSlots[k].ts <= end; k++) {
          const s = coinSlots[k];
          if (inIncident(s.ts) && (bps === null || Math.abs(s.bps) > Math.abs(bps))) bps = s.bps;
        }
        if (bps === null) {
          const earliest = Math.min(...open.map((i) => i.start));
          // the coin's last slot at or before `end`
          const last = coinSlots[firstAfter(coinSlots, end) - 1];
          if (last && last.ts >= earliest && last.ts >= end - STALE_SEC) bps = last.bps;
        }
        if (bps === null) continue;
        const start = Math.min(...open.map((i) => i.start));
        const ageDays = Math.max(0, Math.floor((end - start) / DAY));
        const point = pointAt(supply.get(id) ?? [], end, 7);
        let mcapUsd: number | null = point?.usd ?? null;
        let mcapBasis: PsiContributor["mcapBasis"] = mcapUsd === null ? "unknown" : "supply";
        if (
          mcapUsd === null &&
          coin.peak_mcap_usd !== null &&
          coin.peak_mcap_usd !== undefined &&
          aroundDeath(coin.dead_from, d)
        ) {
          mcapUsd = Number(coin.peak_mcap_usd) * Math.max(0, 1 + bps / 10000);
          mcapBasis = "cemetery-peak";
          total += mcapUsd;
          any = true;
        }
        contributors.push({
          id,
          symbol: coin.symbol,
          bps,
          mcapUsd: mcapUsd === null ? null : Math.round(mcapUsd),
          ageDays,
          factor: r2(depreciation(ageDays)),
          mcapBasis,
        });
      }
      contributors.sort(
        (a, b) => (b.mcapUsd ?? 0) * Math.abs(b.bps) - (a.mcapUsd ?? 0) * Math.abs(a.bps) || a.id.localeCompare(b.id),
      );
      const date = isoDay(d);
      const change = prev > 0 ? ((cur - prev) / prev) * 100 : null;
      const { score, band, components } = stabilityIndex(
        contributors,
        any ? total : null,
        stressed.get(date) ?? [],
        change,
      );
      out.push({
        date,
        score,
        band,
        severity: components.severity,
        breadth: components.breadth,
        stress_breadth: components.stressBreadth,
        trend: components.trend,
        total_mcap_usd: any ? total : null,
        contributors_json: JSON.stringify(contributors),
        methodology_version: PSI_VERSION,
      });
    }
    return { tables: { stability_index_daily: out } };
  },
};
