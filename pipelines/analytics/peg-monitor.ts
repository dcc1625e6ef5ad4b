import { isCopiedSource, sourceFamily } from "../sources/lineage.ts";
import { type Analytic, inputsAs, type RegistryCoinRow, type Row } from "./contract.ts";
import {
  BAR_WICK_GUARD_BPS,
  type BarExtreme,
  CONTRADICTION_BPS,
  type DependencyIncident,
  type DepegEventRow,
  detectDepegs,
  deviationBps,
  linkIncidents,
  type PendingIncident,
  SLOT_SEC,
  type Slot,
  thresholdBps,
} from "./depeg-detection.ts";
import { DEATH_GRACE_DAYS, deathPeriod } from "./stress-signals.ts";
import { type AppliedVerdict, applyDepegVerdicts, type DepegVerdictRow, VERDICT_COLUMNS } from "./depeg-verdicts.ts";
import {
  AGREEMENT_BPS,
  computeConsensus,
  type Consensus,
  divergenceBps,
  type Quote,
  type QuoteCategory,
} from "./price-consensus.ts";
import { must } from "../../lib/must.ts";

/**
 * Peg monitor: quality-filters every price observation, forms the 15-minute consensus grid, judges
 * it against the peg reference of its own day, and runs depeg detection per coin. Also derives each
 * coin's current consensus price at as-of (each source's newest accepted observation within its
 * staleness window, `currentQuoteWindowSec`).
 *
 * Quality rules (rejections counted in the manifest):
 * - `price-non-positive-or-nan`: not a finite positive number.
 * - `above-price-bound`: above 1.19× a usable fiat/USD reference (no fiat stablecoin trades there).
 * - `glitch-run`: the rest of the same source's glitch episode — its consecutive quotes beyond the
 *   depeg threshold on the side of, and adjoining, a quote refused by the bound (`glitchRuns`).
 * - `single-source-spike`: a quote ≥ 2000 bps away from both the previous and the next quote of the
 *   same source on the same side (a one-point excursion that reverts), with no other source in its
 *   slot within 500 bps of it.
 * - `stuck-quote`: a source repeating one identical price on consecutive observations spanning
 *   ≥ 24 h, at a price beyond the depeg threshold from the reference, while the market around it
 *   moved — another family quoted elsewhere during the run, or the source's own next quote left the
 *   repeated level — is not fresh evidence: every quote of that run is refused (e.g. a stale 0.1455
 *   repeated for a week, then 1.005). A steady level (USDJ's two-decimal 1.10-1.13 of 2023) is an
 *   observation, and so is a move: a repeat of at most two periods after which the source's next
 *   quote stays beyond the threshold the same way (`stuckQuotes`). Repeats at peg are kept.
 *
 * NAV tokens (price follows a rising NAV) and floating pegs (no fixed target) keep their
 * consensus prices but are not judged: no depeg detection, no peg score. Slots without a usable
 * reference (a non-USD peg with a stale ECB rate and no same-peg median) are not judged either.
 * `price_current.unjudged_reason` says why a current price is not judged (`nav-token`,
 * `floating-peg`, `no-reference`; null when judged); its `price_confidence` is always the
 * consensus label (spec 2.2: `low` only when sources diverge), never lowered for a missing reference.
 */
export const CURRENT_QUOTE_WINDOW_SEC = 24 * 3600;
const SPIKE_BPS = 2000;
const CORROBORATION_BPS = 500;
const USABLE_REFERENCES = new Set(["par", "fx", "median"]);
const COMMODITY_CURRENCIES = new Set(["XAU", "XAG"]);

/** One price observation of a coin (a row of int_price_observations with its day's peg reference). Times Unix s, prices USD. */
export interface Obs {
  source: string;
  category: QuoteCategory;
  kind: "live" | "backfill";
  ts: number;
  intervalSec: number;
  price: number;
  /** Bar low and high (USD) for OHLC sources; equal to `price` for point quotes. */
  low: number;
  high: number;
  mode: Quote["observedAtMode"];
  reference: number | null;
  referenceSource: string;
}

/** Reference usable for judging `price`: a trusted source, and for metals the same unit (within 50%). */
function usableReference(o: Obs, pegCurrency: string): number | null {
  if (o.reference === null || !(o.reference > 0) || !USABLE_REFERENCES.has(o.referenceSource)) return null;
  if (COMMODITY_CURRENCIES.has(pegCurrency) && Math.abs(o.price / o.reference - 1) > 0.5) return null;
  return o.reference;
}

/** Splits a coin's observations into kept and rejected (with reasons), applying the quality rules. */
export function filterObservations(
  obs: Obs[],
  pegCurrency: string,
  pegType = "peggedUSD",
  judged = true,
): { kept: Obs[]; rejected: { obs: Obs; reason: string }[] } {
  const rejected: { obs: Obs; reason: string }[] = [];
  const candidates: Obs[] = [];
  const overBound: Obs[] = [];
  for (const o of obs) {
    if (!Number.isFinite(o.price) || o.price <= 0) {
      rejected.push({ obs: o, reason: "price-non-positive-or-nan" });
      continue;
    }
    const ref = usableReference(o, pegCurrency);
    if (judged && ref !== null && !COMMODITY_CURRENCIES.has(pegCurrency) && o.price > PRICE_BOUND * ref) {
      rejected.push({ obs: o, reason: "above-price-bound" });
      overBound.push(o);
      continue;
    }
    candidates.push(o);
  }
  const glitch = judged ? glitchRuns(candidates, overBound, pegCurrency, thresholdBps(pegType)) : new Set<Obs>();
  for (const o of glitch) rejected.push({ obs: o, reason: "glitch-run" });
  const plausible = candidates.filter((o) => !glitch.has(o));
  const bySource = new Map<string, Obs[]>();
  for (const o of plausible) {
    const a = bySource.get(o.source);
    if (a) a.push(o);
    else bySource.set(o.source, [o]);
  }
  const slotOf = (o: Obs) => Math.ceil(o.ts / SLOT_SEC) * SLOT_SEC;
  const bySlot = new Map<number, Obs[]>();
  for (const o of plausible) {
    const a = bySlot.get(slotOf(o));
    if (a) a.push(o);
    else bySlot.set(slotOf(o), [o]);
  }
  const spikes = new Set<Obs>();
  for (const seq of bySource.values()) {
    seq.sort((a, b) => a.ts - b.ts);
    for (let i = 1; i + 1 < seq.length; i++) {
      const d1 = deviationBps(seq[i].price, seq[i - 1].price);
      const d2 = deviationBps(seq[i].price, seq[i + 1].price);
      if (Math.abs(d1) < SPIKE_BPS || Math.abs(d2) < SPIKE_BPS || Math.sign(d1) !== Math.sign(d2)) continue;
      const others = (bySlot.get(slotOf(seq[i])) ?? []).filter((o) => o.source !== seq[i].source);
      if (others.some((o) => Math.abs(deviationBps(o.price, seq[i].price)) <= CORROBORATION_BPS)) continue;
      spikes.add(seq[i]);
    }
  }
  for (const o of spikes) rejected.push({ obs: o, reason: "single-source-spike" });
  const stuck = judged
    ? stuckQuotes([...bySource.values()], plausible, pegCurrency, thresholdBps(pegType))
    : new Set<Obs>();
  for (const o of stuck) if (!spikes.has(o)) rejected.push({ obs: o, reason: "stuck-quote" });
  return { kept: plausible.filter((o) => !spikes.has(o) && !stuck.has(o)), rejected };
}

/**
 * Reason of a `depeg_flagged_prints` row and its manifest count: a consensus slot kept in the price
 * grid but not used as depeg evidence (a lone print its neighbours contradict, see `FlaggedPrint`).
 */
export const LONE_PRINT_REASON = "lone-contradicted-print";

/** Hard plausibility bound: no fiat stablecoin trades above this multiple of its reference. */
export const PRICE_BOUND = 1.19;

/**
 * Glitch runs (rule `glitch-run`): per source, a maximal run of consecutive quotes lying beyond the
 * plausibility band — the coin's depeg threshold around the independent reference (par or the ECB
 * rate) — on the side of a quote the hard bound refused, and touching that refused quote (adjacent
 * in the source's sequence), is one upstream glitch episode: the whole run is refused, not only the
 * prints past the bound (CoinGecko's USDT 1.06-1.18 of 2018-07-12…21 before its 1.22-1.32 of 07-22…24).
 * `candidates` are quotes that passed the bound, `overBound` those it refused.
 */
function glitchRuns(candidates: Obs[], overBound: Obs[], pegCurrency: string, threshold: number): Set<Obs> {
  const out = new Set<Obs>();
  if (!overBound.length) return out;
  const sources = new Set(overBound.map((o) => o.source));
  for (const source of sources) {
    const seq = [
      ...candidates.filter((o) => o.source === source).map((o) => ({ o, bound: false })),
      ...overBound.filter((o) => o.source === source).map((o) => ({ o, bound: true })),
    ].sort((a, b) => a.o.ts - b.o.ts);
    const beyond = (o: Obs) => {
      const ref = usableReference(o, pegCurrency);
      return ref !== null && deviationBps(o.price, ref) >= threshold;
    };
    let i = 0;
    while (i < seq.length) {
      if (!seq[i].bound && !beyond(seq[i].o)) {
        i++;
        continue;
      }
      let j = i;
      while (j + 1 < seq.length && (seq[j + 1].bound || beyond(seq[j + 1].o))) j++;
      if (seq.slice(i, j + 1).some((x) => x.bound)) for (let k = i; k <= j; k++) if (!seq[k].bound) out.add(seq[k].o);
      i = j + 1;
    }
  }
  return out;
}

/** Minimum span (s) of a run of identical quotes of one source before it counts as stuck. */
export const STUCK_QUOTE_MIN_SPAN_SEC = 24 * 3600;

/**
 * Quotes of stuck runs: per source (each sequence ascending by ts), maximal runs of exactly equal
 * prices spanning ≥ 24 h whose price is beyond `threshold` bps from a usable reference, while the
 * market around the run moved. A quote **leaves** the run's level when it lies ≥ CONTRADICTION_BPS
 * (300) from the repeated price or is not beyond the threshold the same way. The run is stuck when
 * - a quote of another source family (`all`: every plausible quote of the coin) inside the run's
 *   span leaves the level (the market was elsewhere while the source stood still), or
 * - the source's next different quote leaves the level (the repeat hid a move: OUSD's 0.1455 for a
 *   week, then 1.005; USDN's 0.3014 for 45 days, then 0.085) — except a **move**: a run of at most
 *   two of the source's periods (a daily archive repeating one day) whose next quote stays beyond
 *   the threshold the same way (UST's 0.754 of 2022-05-09/10 followed by 0.86).
 * Otherwise the run is a steady level and kept (USDJ's 1.13, 1.10, 1.12 … of 2023, each followed by
 * a quote within 300 bps); a run still at the end of the sequence (no later quote by as-of) is kept
 * unless another family contradicts it.
 */
function stuckQuotes(sequences: Obs[][], all: Obs[], pegCurrency: string, threshold: number): Set<Obs> {
  const out = new Set<Obs>();
  const byTs = [...all].sort((a, b) => a.ts - b.ts);
  const bpsFromRef = (o: Obs) => {
    const ref = usableReference(o, pegCurrency);
    return ref === null ? null : deviationBps(o.price, ref);
  };
  for (const seq of sequences) {
    let i = 0;
    while (i < seq.length) {
      let j = i;
      while (j + 1 < seq.length && seq[j + 1].price === seq[i].price) j++;
      const span = seq[j].ts - seq[i].ts;
      const bps = bpsFromRef(seq[i]);
      if (j > i && span >= STUCK_QUOTE_MIN_SPAN_SEC && bps !== null && Math.abs(bps) >= threshold) {
        const level = seq[i].price;
        const family = sourceFamily(seq[i].source);
        const sameCondition = (o: Obs) => {
          const b = bpsFromRef(o);
          return b !== null && Math.sign(b) === Math.sign(bps) && Math.abs(b) >= threshold;
        };
        const leaves = (o: Obs) => Math.abs(deviationBps(o.price, level)) >= CONTRADICTION_BPS || !sameCondition(o);
        const next = seq[j + 1];
        const short = span <= 2 * Math.max(seq[i].intervalSec, SLOT_SEC);
        const move = next !== undefined && short && sameCondition(next);
        const laterLeft = next !== undefined && !move && leaves(next);
        const from = lowerBound(byTs, seq[i].ts);
        let otherLeft = false;
        for (let k = from; k < byTs.length && byTs[k].ts <= seq[j].ts && !otherLeft; k++)
          otherLeft = sourceFamily(byTs[k].source) !== family && leaves(byTs[k]);
        if (laterLeft || otherLeft) for (let k = i; k <= j; k++) out.add(seq[k]);
      }
      i = j + 1;
    }
  }
  return out;
}

/** Index of the first element of `xs` (ascending by ts) with ts ≥ `ts` (xs.length when none). */
function lowerBound(xs: Obs[], ts: number): number {
  let lo = 0,
    hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid].ts < ts) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const toQuote = (o: Obs): Quote => ({
  source: o.source,
  category: o.category,
  family: sourceFamily(o.source),
  copied: isCopiedSource(o.source),
  price: o.price,
  observedAt: o.ts,
  observedAtMode: o.mode,
});

/**
 * Guarded bar extremes of a slot's observations: lowest low / highest high of bars (interval
 * < 1 day, low ≠ high) lying within BAR_WICK_GUARD_BPS of their own close; null when none.
 */
function barExtremes(bars: Obs[]): { low: BarExtreme | null; high: BarExtreme | null } {
  let low: BarExtreme | null = null;
  let high: BarExtreme | null = null;
  for (const o of bars) {
    if (o.intervalSec <= 0 || o.intervalSec >= 86400 || o.low === o.high) continue;
    if (Math.abs(deviationBps(o.low, o.price)) <= BAR_WICK_GUARD_BPS && (!low || o.low < low.price)) {
      low = {
        price: o.low,
        source: o.source,
        family: sourceFamily(o.source),
        barEndTs: o.ts,
        intervalSec: o.intervalSec,
      };
    }
    if (Math.abs(deviationBps(o.high, o.price)) <= BAR_WICK_GUARD_BPS && (!high || o.high > high.price)) {
      high = {
        price: o.high,
        source: o.source,
        family: sourceFamily(o.source),
        barEndTs: o.ts,
        intervalSec: o.intervalSec,
      };
    }
  }
  return { low, high };
}

/**
 * Supply (USD) at `ts` from a coin's ascending daily history, carried forward. Live slots without
 * history use the current supply; backfill slots before the first history point are unknown (no
 * floor, not large-cap): a dead coin's current supply says nothing about its past.
 */
function supplyAt(
  history: { dayTs: number; usd: number }[],
  ts: number,
  current: number | null,
  live: boolean,
): { usd: number | null; source: Slot["supplySource"] } {
  let lo = 0,
    hi = history.length - 1,
    found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (history[mid].dayTs <= ts) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (found >= 0) return { usd: history[found].usd, source: "history" };
  return live && current !== null ? { usd: current, source: "current" } : { usd: null, source: "unknown" };
}

/**
 * Builds a coin's slots: last quote per source per 15-minute slot, judged against the slot's reference.
 * A slot is stamped with its end (Unix s), except the slot in progress at `asOf`, stamped `asOf`: a
 * build as of a time between slot boundaries (a live build) dates nothing after its as-of.
 */
export function buildSlots(
  obs: Obs[],
  pegCurrency: string,
  supplyHistory: { dayTs: number; usd: number }[],
  currentSupply: number | null,
  asOf = Number.POSITIVE_INFINITY,
): Slot[] {
  const bySlot = new Map<number, Map<string, Obs>>();
  const barsBySlot = new Map<number, Obs[]>();
  for (const o of obs) {
    const ts = Math.min(Math.ceil(o.ts / SLOT_SEC) * SLOT_SEC, asOf);
    const m = bySlot.get(ts) ?? new Map<string, Obs>();
    const prev = m.get(o.source);
    if (!prev || o.ts >= prev.ts) m.set(o.source, o);
    bySlot.set(ts, m);
    if (o.low !== o.high) barsBySlot.set(ts, [...(barsBySlot.get(ts) ?? []), o]);
  }
  return [...bySlot.entries()]
    .sort(([a], [b]) => a - b)
    .map(([ts, m]) => {
      const extremes = barExtremes(barsBySlot.get(ts) ?? []);
      const latest = [...m.values()].sort((a, b) => b.ts - a.ts || a.source.localeCompare(b.source));
      const ref = usableReference(latest[0], pegCurrency);
      const quotes = latest.map(toQuote).sort((a, b) => a.source.localeCompare(b.source));
      const live = latest.some((o) => o.kind === "live");
      const supply = supplyAt(supplyHistory, ts, currentSupply, live);
      return {
        ts,
        consensus: computeConsensus(quotes, ref),
        quotes,
        pegReference: ref,
        referenceSource: latest[0].referenceSource,
        supplyUsd: supply.usd,
        supplySource: supply.source,
        kind: live ? "live" : "backfill",
        cadenceSec: Math.max(...latest.map((o) => o.intervalSec)),
        barLow: extremes.low,
        barHigh: extremes.high,
      };
    });
}

const j = (v: unknown) => JSON.stringify(v);
const ROW_COLUMNS = {
  id: "BIGINT",
  stablecoin_id: "VARCHAR",
  symbol: "VARCHAR",
  peg_type: "VARCHAR",
  direction: "VARCHAR",
  peak_deviation_bps: "BIGINT",
  started_at: "BIGINT",
  ended_at: "BIGINT",
  start_price: "DOUBLE",
  peak_price: "DOUBLE",
  recovery_price: "DOUBLE",
  peg_reference: "DOUBLE",
  source: "VARCHAR",
  confirmation_sources: "VARCHAR",
  pending_reason: "VARCHAR",
  close_reason: "VARCHAR",
  constituent_event_count: "BIGINT",
  provenance_json: "VARCHAR",
  trace_json: "VARCHAR",
  source_families: "VARCHAR",
} as const;
const eventRow = (e: DepegEventRow): Row => ({
  id: e.id,
  stablecoin_id: e.stablecoinId,
  symbol: e.symbol,
  peg_type: e.pegType,
  direction: e.direction,
  peak_deviation_bps: e.peakDeviationBps,
  started_at: e.startedAt,
  ended_at: e.endedAt,
  start_price: e.startPrice,
  peak_price: e.peakPrice,
  recovery_price: e.recoveryPrice,
  peg_reference: e.pegReference,
  source: e.source,
  confirmation_sources: e.confirmationSources,
  pending_reason: e.pendingReason,
  close_reason: e.closeReason,
  constituent_event_count: e.constituentEventCount,
  provenance_json: j(e.provenance),
  trace_json: j(e.trace),
  source_families: e.families.join("+"),
});

/**
 * Why a coin's current price is not judged against a fixed peg reference, or null when it is:
 * `nav-token` / `floating-peg` (registry flags), `no-reference` (no usable reference for the newest
 * current quote's day: a non-USD peg whose ECB rate is stale and which has no same-peg median). Not
 * judged means no current deviation, no depeg detection and no peg score; it says nothing about the
 * price itself, whose `priceConfidence` stays what the consensus found.
 */
export type UnjudgedReason = "nav-token" | "floating-peg" | "no-reference";

/** A coin's current price: the consensus of its current quotes and the reference it is judged against. */
export interface CurrentPrice {
  consensus: Consensus;
  /** USD per peg unit of the newest quote's day, null when no usable reference exists. */
  reference: number | null;
  /** `par`, `fx`, `median`, `fx-fallback`, `floating`, `missing`…; null without any current quote. */
  referenceSource: string | null;
  /** Why the price is not judged against the reference (null: judged, `deviation_bps` set). */
  unjudgedReason: UnjudgedReason | null;
  /** Why there is no current price (null when priced). */
  unavailableReason: PriceUnavailableReason | null;
}

/**
 * Staleness window (s) of one source's observation for the current price at as-of, by the source's
 * cadence (`intervalSec`): a live point quote (interval 0) or an intraday bar stays current for
 * CURRENT_QUOTE_WINDOW_SEC (24 h); a periodic series for two of its periods (a daily archive's
 * 00:00 UTC point for 48 h, so one missed publication does not blank the price).
 */
export function currentQuoteWindowSec(intervalSec: number): number {
  return Math.max(CURRENT_QUOTE_WINDOW_SEC, 2 * intervalSec);
}

/** Why a coin has no current price at as-of: never observed up to as-of, or every source's newest accepted observation is older than its staleness window. */
export type PriceUnavailableReason = "no-observation" | "stale-beyond-window";

/**
 * Current price of one coin at `asOf` (Unix s): the consensus (price-consensus.ts) of each source's
 * newest accepted observation at or before as-of (`obs` must already be quality-filtered), keeping
 * only sources whose observation lies within its staleness window (`currentQuoteWindowSec` of the
 * source's cadence). Live quotes (list, markets) and recorded history (daily archives, bars) are
 * equal evidence: a build as of a past day is priced from what was observed then, with each quote's
 * real observation time. Judged against the usable reference of the newest quote. `judged` false
 * (NAV token or floating peg) gives `nav-token` / `floating-peg` first; a missing usable reference
 * gives `no-reference`. The confidence label is the consensus's own. Without a quote in its window:
 * price null, source `missing`, and `unavailableReason` says whether anything was ever observed.
 */
export function currentConsensus(
  obs: Obs[],
  pegCurrency: string,
  asOf: number,
  flags: { navToken?: boolean; floatingPeg?: boolean } = {},
): CurrentPrice {
  const latest = new Map<string, Obs>();
  let seen = false;
  for (const o of obs) {
    if (o.ts > asOf) continue;
    seen = true;
    if (o.ts < asOf - currentQuoteWindowSec(o.intervalSec)) continue;
    const p = latest.get(o.source);
    if (!p || o.ts >= p.ts) latest.set(o.source, o);
  }
  const quotes = [...latest.values()];
  if (!quotes.length) {
    return {
      consensus: computeConsensus([], null),
      reference: null,
      referenceSource: null,
      unjudgedReason: null,
      unavailableReason: seen ? "stale-beyond-window" : "no-observation",
    };
  }
  const newest = [...quotes].sort((a, b) => b.ts - a.ts)[0];
  const reference = usableReference(newest, pegCurrency);
  const unjudgedReason: UnjudgedReason | null = flags.navToken
    ? "nav-token"
    : flags.floatingPeg
      ? "floating-peg"
      : reference === null
        ? "no-reference"
        : null;
  return {
    consensus: computeConsensus(quotes.map(toQuote), reference),
    reference,
    referenceSource: newest.referenceSource,
    unjudgedReason,
    unavailableReason: null,
  };
}

/** Input rows of the peg monitor (columns of its selects; numeric columns may arrive as text, hence `Number()`). */
type PegMonitorInputs = {
  obs: {
    stablecoin_id: string;
    peg_type: string;
    source: string;
    category: Obs["category"];
    kind: Obs["kind"];
    ts: number;
    interval_sec: number;
    price_usd: number | string | null;
    low_usd: number | string | null;
    high_usd: number | string | null;
    observed_at_mode: Obs["mode"];
    reference_usd: number | string | null;
    reference_source: string | null;
  };
  coins: Pick<
    RegistryCoinRow,
    "id" | "symbol" | "peg_type" | "peg_currency" | "nav_token" | "floating_peg" | "dead_from" | "risk_json"
  >;
  supplyHistory: { stablecoin_id: string; day_ts: number; usd: number | string };
  supplyCurrent: { stablecoin_id: string; circulating_usd: number | string };
  verdicts: Omit<DepegVerdictRow, "event_id" | "merge_into"> & { event_id: string; merge_into: string | null };
};

/**
 * The peg monitor as a DAG node (reads observations, references, supply and the operator's reviewed
 * depeg verdicts; writes grid, events, current prices, `depeg_verdicts_applied`: what became of each
 * verdict row, pipelines/analytics/depeg-verdicts.ts, and `depeg_flagged_prints`: the lone contradicted prints detection did not use, one row per
 * slot with its neighbours' deviations, counted in the manifest as `lone-contradicted-print`).
 */
export const pegMonitor: Analytic = {
  name: "peg_monitor",
  inputs: {
    obs: `select o.stablecoin_id, o.peg_type, o.source, o.category, o.kind, o.ts::integer as ts, o.interval_sec::integer as interval_sec,
            o.price_usd, o.low_usd, o.high_usd, o.observed_at_mode, r.reference_usd, r.reference_source
          from int_price_observations o
          left join int_peg_references r on r.peg_type = o.peg_type and r.day = cast(make_timestamp(o.ts * 1000000) as date)
          order by o.stablecoin_id, o.ts, o.source`,
    coins:
      "select id, symbol, peg_type, peg_currency, nav_token, floating_peg, dead_from, risk_json from registry_coins order by id",
    supplyHistory: `select stablecoin_id, epoch(date)::integer as day_ts, usd from int_supply_history_points where usd is not null
          qualify row_number() over (partition by stablecoin_id, date order by priority, source) = 1
          order by stablecoin_id, day_ts`,
    supplyCurrent:
      "select stablecoin_id, circulating_usd from int_coins_supply_usd where circulating_usd is not null order by stablecoin_id",
    verdicts:
      "select version, key, sha256, action, event_id::varchar as event_id, merge_into::varchar as merge_into from operator_depeg_verdicts order by version, event_id",
  },
  outputs: {
    price_consensus_slots: {
      stablecoin_id: "VARCHAR",
      slot_ts: "BIGINT",
      price: "DOUBLE",
      price_source: "VARCHAR",
      price_confidence: "VARCHAR",
      agree_sources: "VARCHAR",
      consensus_sources: "VARCHAR",
      peg_reference: "DOUBLE",
      reference_source: "VARCHAR",
      deviation_bps: "BIGINT",
      kind: "VARCHAR",
      quotes_json: "VARCHAR",
    },
    price_current: {
      stablecoin_id: "VARCHAR",
      price: "DOUBLE",
      price_source: "VARCHAR",
      price_confidence: "VARCHAR",
      consensus_sources_json: "VARCHAR",
      agree_sources_json: "VARCHAR",
      price_observed_at: "BIGINT",
      price_observed_at_mode: "VARCHAR",
      price_synced_at: "BIGINT",
      peg_reference: "DOUBLE",
      reference_source: "VARCHAR",
      deviation_bps: "BIGINT",
      unjudged_reason: "VARCHAR",
      price_unavailable_reason: "VARCHAR",
    },
    price_observation_rejections: {
      stablecoin_id: "VARCHAR",
      source: "VARCHAR",
      ts: "BIGINT",
      price_usd: "DOUBLE",
      reason: "VARCHAR",
    },
    source_quality_daily: {
      stablecoin_id: "VARCHAR",
      date: "VARCHAR",
      judged: "BOOLEAN",
      slots: "BIGINT",
      sources_quoted: "VARCHAR",
      families_quoted: "VARCHAR",
      disagreeing_sources: "VARCHAR",
      stuck_sources: "VARCHAR",
      rejected_quotes: "BIGINT",
      rejected_json: "VARCHAR",
      consensus_low: "DOUBLE",
      consensus_high: "DOUBLE",
      high_confidence_slots: "BIGINT",
    },
    depeg_event_rows: { ...ROW_COLUMNS },
    depeg_incidents: { ...ROW_COLUMNS },
    depeg_verdicts_applied: { ...VERDICT_COLUMNS, applied: "BOOLEAN", note: "VARCHAR" },
    depeg_flagged_prints: {
      stablecoin_id: "VARCHAR",
      symbol: "VARCHAR",
      direction: "VARCHAR",
      slot_ts: "BIGINT",
      price: "DOUBLE",
      deviation_bps: "BIGINT",
      previous_ts: "BIGINT",
      previous_bps: "BIGINT",
      next_ts: "BIGINT",
      next_bps: "BIGINT",
      reason: "VARCHAR",
      quotes_json: "VARCHAR",
    },
    depeg_pending: {
      stablecoin_id: "VARCHAR",
      symbol: "VARCHAR",
      direction: "VARCHAR",
      first_seen_at: "BIGINT",
      last_seen_at: "BIGINT",
      first_seen_bps: "BIGINT",
      last_seen_bps: "BIGINT",
      peak_seen_bps: "BIGINT",
      reason: "VARCHAR",
      age_sec: "BIGINT",
      expires_at: "BIGINT",
      available_categories_json: "VARCHAR",
      missing_categories_json: "VARCHAR",
    },
  },
  run(selected, { asOf }) {
    const inputs = inputsAs<PegMonitorInputs>(selected);
    const coins = new Map(inputs.coins.map((c) => [c.id, c]));
    const group = <R extends { stablecoin_id: string }, T>(rows: R[], f: (r: R) => T) => {
      const m = new Map<string, T[]>();
      for (const r of rows) {
        const k = r.stablecoin_id;
        const a = m.get(k);
        if (a) a.push(f(r));
        else m.set(k, [f(r)]);
      }
      return m;
    };
    const obsBy = group(
      inputs.obs,
      (r): Obs => ({
        source: r.source,
        category: r.category,
        kind: r.kind,
        ts: r.ts,
        intervalSec: r.interval_sec,
        price: r.price_usd === null ? NaN : Number(r.price_usd),
        low: r.low_usd === null ? NaN : Number(r.low_usd),
        high: r.high_usd === null ? NaN : Number(r.high_usd),
        mode: r.observed_at_mode,
        reference: r.reference_usd === null ? null : Number(r.reference_usd),
        referenceSource: r.reference_source ?? "missing",
      }),
    );
    const histBy = group(inputs.supplyHistory, (r) => ({ dayTs: r.day_ts, usd: Number(r.usd) }));
    const current = new Map(inputs.supplyCurrent.map((r) => [r.stablecoin_id, Number(r.circulating_usd)]));
    const verdicts: DepegVerdictRow[] = inputs.verdicts.map((v) => ({
      ...v,
      event_id: Number(v.event_id),
      merge_into: v.merge_into === null ? null : Number(v.merge_into),
    }));
    const applied: AppliedVerdict[] = [];
    const tables: Record<string, Row[]> = {
      price_consensus_slots: [],
      price_current: [],
      price_observation_rejections: [],
      source_quality_daily: [],
      depeg_event_rows: [],
      depeg_incidents: [],
      depeg_verdicts_applied: [],
      depeg_flagged_prints: [],
      depeg_pending: [],
    };
    const rejected: Record<string, number> = {};
    let expired = 0;
    let lonePrints = 0;
    // Upstream dependencies first, so dependency confirmation reads their finished incidents.
    const confirmed = new Map<string, DependencyIncident[]>();
    // Observations and dependencies name registry coins only.
    const coinOf = (id: string) => must(coins.get(id), `registry coin ${id}`);
    for (const id of upstreamFirst([...obsBy.keys()].sort(), (id) => dependencyIds(coinOf(id)))) {
      const coin = coinOf(id);
      const obs = obsBy.get(id) ?? [];
      // NAV tokens and floating pegs: consensus prices yes, judgement against a fixed reference no.
      const judged = !coin.nav_token && !coin.floating_peg;
      const { kept, rejected: rej } = filterObservations(obs, coin.peg_currency, coin.peg_type, judged);
      for (const r of rej) {
        rejected[r.reason] = (rejected[r.reason] ?? 0) + 1;
        tables.price_observation_rejections.push({
          stablecoin_id: id,
          source: r.obs.source,
          ts: r.obs.ts,
          price_usd: Number.isFinite(r.obs.price) ? r.obs.price : null,
          reason: r.reason,
        });
      }
      const slots = buildSlots(kept, coin.peg_currency, histBy.get(id) ?? [], current.get(id) ?? null, asOf);
      for (const s of slots) {
        tables.price_consensus_slots.push({
          stablecoin_id: id,
          slot_ts: s.ts,
          price: s.consensus.price,
          price_source: s.consensus.priceSource,
          price_confidence: s.consensus.priceConfidence,
          agree_sources: s.consensus.agreeSources.join("+"),
          consensus_sources: s.consensus.consensusSources.join("+"),
          peg_reference: s.pegReference,
          reference_source: s.referenceSource,
          deviation_bps:
            s.pegReference !== null && s.consensus.price !== null
              ? deviationBps(s.consensus.price, s.pegReference)
              : null,
          kind: s.kind,
          quotes_json: j(s.quotes.map((q) => [q.source, q.category, q.price])),
        });
      }
      const cur = currentConsensus(kept, coin.peg_currency, asOf, {
        navToken: Boolean(coin.nav_token),
        floatingPeg: Boolean(coin.floating_peg),
      });
      const c = cur.consensus;
      tables.price_current.push({
        stablecoin_id: id,
        price: c.price,
        price_source: c.priceSource,
        price_confidence: c.priceConfidence,
        consensus_sources_json: j(c.consensusSources),
        agree_sources_json: j(c.agreeSources),
        price_observed_at: c.observedAt,
        price_observed_at_mode: c.observedAtMode,
        price_synced_at: c.price === null ? null : asOf,
        peg_reference: cur.reference,
        reference_source: cur.referenceSource,
        deviation_bps: cur.reference !== null && c.price !== null ? deviationBps(c.price, cur.reference) : null,
        unjudged_reason: c.price === null ? null : cur.unjudgedReason,
        price_unavailable_reason: cur.unavailableReason,
      });
      tables.source_quality_daily.push(...sourceQualityDays(id, judged, obs, rej, slots));
      if (!judged) continue;
      const dependencyIncidents = dependencyIds(coin).flatMap((d) => confirmed.get(d) ?? []);
      const det = detectDepegs({ stablecoinId: id, symbol: coin.symbol, pegType: coin.peg_type }, slots, asOf, {
        trackingEndsAt: trackingEndsAt(coin.dead_from ?? null),
        dependencyIncidents,
      });
      expired += det.expiredPending;
      lonePrints += det.flagged.length;
      for (const f of det.flagged)
        tables.depeg_flagged_prints.push({
          stablecoin_id: id,
          symbol: coin.symbol,
          direction: f.direction,
          slot_ts: f.print.ts,
          price: f.print.price,
          deviation_bps: f.print.bps,
          previous_ts: f.previousTs,
          previous_bps: f.previousBps,
          next_ts: f.nextTs,
          next_bps: f.nextBps,
          reason: LONE_PRINT_REASON,
          quotes_json: j(f.print.quotes.map((q) => [q.source, q.category, q.price, q.observedAt])),
        });
      for (const r of det.rows) tables.depeg_event_rows.push(eventRow(r));
      const reviewed = applyDepegVerdicts(linkIncidents(det.rows), verdicts);
      applied.push(...reviewed.applied);
      const incidents = reviewed.incidents;
      confirmed.set(
        id,
        incidents.map((r) => ({
          stablecoinId: id,
          direction: r.direction,
          startedAt: r.startedAt,
          endedAt: r.endedAt,
        })),
      );
      for (const r of incidents) tables.depeg_incidents.push(eventRow(r));
      if (det.pending) tables.depeg_pending.push(pendingRow(det.pending));
    }
    const reported = new Set(applied.map((a) => `${a.version}|${a.event_id}`));
    for (const v of verdicts)
      if (!reported.has(`${v.version}|${v.event_id}`))
        applied.push({ ...v, applied: false, note: "event-not-produced" });
    tables.depeg_verdicts_applied = applied.sort(
      (a, b) => a.version - b.version || a.event_id - b.event_id,
    ) as unknown as Row[];
    if (expired) rejected["pending-expired-unconfirmed"] = expired;
    if (lonePrints) rejected[LONE_PRINT_REASON] = lonePrints;
    return { tables, rejected };
  },
};

/**
 * When tracking of a coin ends: DEATH_GRACE_DAYS after its death period ended (registry `dead_from`,
 * set only when the death is known at as-of), as for the stability index and DEWS universes; null
 * while alive. The collapse itself stays tracked (UST dead 2022-05-09 is still judged on 2022-05-12).
 */
export function trackingEndsAt(deadFrom: string | null): number | null {
  const p = deathPeriod(deadFrom);
  return p === null ? null : p.end + DEATH_GRACE_DAYS * 86400;
}

/** Curated upstream dependency ids of a registry coin row (`risk_json.dependencies[].id`), sorted. */
function dependencyIds(coin: Pick<RegistryCoinRow, "risk_json">): string[] {
  if (!coin.risk_json) return [];
  const deps = (JSON.parse(String(coin.risk_json)).dependencies ?? []) as { id: string }[];
  return deps.map((d) => d.id).sort();
}

/**
 * `ids` reordered so every id comes after the ids it depends on (`depsOf`; ids outside `ids` are
 * ignored), otherwise keeping the given order. The registry rejects dependency cycles; a cycle here
 * would keep its members in the given order.
 */
export function upstreamFirst(ids: string[], depsOf: (id: string) => string[]): string[] {
  const present = new Set(ids);
  const out: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (id: string) => {
    if (state.has(id)) return;
    state.set(id, "visiting");
    for (const d of depsOf(id)) if (present.has(d)) visit(d);
    state.set(id, "done");
    out.push(id);
  };
  for (const id of ids) visit(id);
  return out;
}

const dayOf = (ts: number) => new Date(ts * 1000).toISOString().slice(0, 10);
const joinSorted = (xs: Iterable<string>) => [...new Set(xs)].sort().join("+");

/**
 * Per UTC day of one coin (slot end ts − 1 s decides the day): the sources quoted, their families,
 * sources whose quote sat outside the agreement window of a slot's consensus, stuck sources, and
 * rejected quotes by source and rule — so every consensus price can be audited.
 */
function sourceQualityDays(
  id: string,
  judged: boolean,
  obs: Obs[],
  rejected: { obs: Obs; reason: string }[],
  slots: Slot[],
): Row[] {
  type Day = {
    sources: Set<string>;
    disagree: Set<string>;
    stuck: Set<string>;
    rejected: Record<string, Record<string, number>>;
    nRejected: number;
    slots: number;
    high: number;
    lo: number | null;
    hi: number | null;
  };
  const days = new Map<string, Day>();
  const day = (ts: number) => {
    const k = dayOf(ts - 1);
    let d = days.get(k);
    if (!d) {
      d = {
        sources: new Set(),
        disagree: new Set(),
        stuck: new Set(),
        rejected: {},
        nRejected: 0,
        slots: 0,
        high: 0,
        lo: null,
        hi: null,
      };
      days.set(k, d);
    }
    return d;
  };
  for (const o of obs) day(o.ts).sources.add(o.source);
  for (const r of rejected) {
    const d = day(r.obs.ts);
    d.nRejected++;
    d.rejected[r.obs.source] ??= {};
    const bySrc = d.rejected[r.obs.source];
    bySrc[r.reason] = (bySrc[r.reason] ?? 0) + 1;
    if (r.reason === "stuck-quote") d.stuck.add(r.obs.source);
  }
  for (const s of slots) {
    const d = day(s.ts);
    d.slots++;
    const p = s.consensus.price;
    if (p === null) continue;
    if (s.consensus.priceConfidence === "high") d.high++;
    d.lo = d.lo === null ? p : Math.min(d.lo, p);
    d.hi = d.hi === null ? p : Math.max(d.hi, p);
    for (const q of s.quotes) if (divergenceBps(q.price, p) > AGREEMENT_BPS) d.disagree.add(q.source);
  }
  return [...days.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([date, d]) => ({
      stablecoin_id: id,
      date,
      judged,
      slots: d.slots,
      sources_quoted: joinSorted(d.sources),
      families_quoted: joinSorted([...d.sources].map(sourceFamily)),
      disagreeing_sources: joinSorted(d.disagree),
      stuck_sources: joinSorted(d.stuck),
      rejected_quotes: d.nRejected,
      rejected_json: j(Object.fromEntries(Object.entries(d.rejected).sort(([a], [b]) => a.localeCompare(b)))),
      consensus_low: d.lo,
      consensus_high: d.hi,
      high_confidence_slots: d.high,
    }));
}

const pendingRow = (p: PendingIncident): Row => ({
  stablecoin_id: p.stablecoinId,
  symbol: p.symbol,
  direction: p.direction,
  first_seen_at: p.firstSeenAt,
  last_seen_at: p.lastSeenAt,
  first_seen_bps: p.firstSeenBps,
  last_seen_bps: p.lastSeenBps,
  peak_seen_bps: p.peakSeenBps,
  reason: p.reason,
  age_sec: p.ageSec,
  expires_at: p.expiresAt,
  available_categories_json: j(p.availableConfirmationCategories),
  missing_categories_json: j(p.missingConfirmationCategories),
});
