import { isCopiedSource, sourceFamily } from "../sources/lineage.ts";
import type { Analytic, Row } from "./contract.ts";
import { BAR_WICK_GUARD_BPS, type BarExtreme, type DepegEventRow, detectDepegs, deviationBps, linkIncidents, type PendingIncident, SLOT_SEC, type Slot, thresholdBps } from "./depeg-detection.ts";
import { AGREEMENT_BPS, computeConsensus, type Consensus, divergenceBps, type Quote, type QuoteCategory } from "./price-consensus.ts";

/**
 * Peg monitor: quality-filters every price observation, forms the 15-minute consensus grid, judges
 * it against the peg reference of its own day, and runs depeg detection per coin. Also derives each
 * coin's current consensus price (live quotes of the last 24 h before as-of).
 *
 * Quality rules (rejections counted in the manifest):
 * - `price-non-positive-or-nan`: not a finite positive number.
 * - `above-price-bound`: above 1.19× a usable fiat/USD reference (no fiat stablecoin trades there).
 * - `single-source-spike`: a quote ≥ 2000 bps away from both the previous and the next quote of the
 *   same source on the same side (a one-point excursion that reverts), with no other source in its
 *   slot within 500 bps of it.
 * - `stuck-quote`: a source repeating one identical price on consecutive observations spanning
 *   ≥ 24 h, at a price beyond the depeg threshold from the reference, is not fresh evidence: every
 *   quote of that run is refused (e.g. a stale 0.1455 repeated for a week). Repeats at peg are kept.
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
export function filterObservations(obs: Obs[], pegCurrency: string, pegType = "peggedUSD", judged = true): { kept: Obs[]; rejected: { obs: Obs; reason: string }[] } {
  const rejected: { obs: Obs; reason: string }[] = [];
  const candidates: Obs[] = [];
  for (const o of obs) {
    if (!Number.isFinite(o.price) || o.price <= 0) { rejected.push({ obs: o, reason: "price-non-positive-or-nan" }); continue; }
    const ref = usableReference(o, pegCurrency);
    if (judged && ref !== null && !COMMODITY_CURRENCIES.has(pegCurrency) && o.price > 1.19 * ref) { rejected.push({ obs: o, reason: "above-price-bound" }); continue; }
    candidates.push(o);
  }
  const bySource = new Map<string, Obs[]>();
  for (const o of candidates) bySource.set(o.source, [...(bySource.get(o.source) ?? []), o]);
  const slotOf = (o: Obs) => Math.ceil(o.ts / SLOT_SEC) * SLOT_SEC;
  const bySlot = new Map<number, Obs[]>();
  for (const o of candidates) bySlot.set(slotOf(o), [...(bySlot.get(slotOf(o)) ?? []), o]);
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
  const stuck = judged ? stuckQuotes([...bySource.values()], pegCurrency, thresholdBps(pegType)) : new Set<Obs>();
  for (const o of stuck) if (!spikes.has(o)) rejected.push({ obs: o, reason: "stuck-quote" });
  return { kept: candidates.filter((o) => !spikes.has(o) && !stuck.has(o)), rejected };
}

/** Minimum span (s) of a run of identical quotes of one source before it counts as stuck. */
export const STUCK_QUOTE_MIN_SPAN_SEC = 24 * 3600;

/**
 * Quotes of stuck runs: per source (each sequence ascending by ts), maximal runs of exactly equal
 * prices spanning ≥ 24 h whose price is beyond `threshold` bps from a usable reference.
 */
function stuckQuotes(sequences: Obs[][], pegCurrency: string, threshold: number): Set<Obs> {
  const out = new Set<Obs>();
  for (const seq of sequences) {
    let i = 0;
    while (i < seq.length) {
      let j = i;
      while (j + 1 < seq.length && seq[j + 1].price === seq[i].price) j++;
      if (j > i && seq[j].ts - seq[i].ts >= STUCK_QUOTE_MIN_SPAN_SEC) {
        const ref = usableReference(seq[i], pegCurrency);
        if (ref !== null && Math.abs(deviationBps(seq[i].price, ref)) >= threshold) for (let k = i; k <= j; k++) out.add(seq[k]);
      }
      i = j + 1;
    }
  }
  return out;
}

const toQuote = (o: Obs): Quote => ({ source: o.source, category: o.category, family: sourceFamily(o.source), copied: isCopiedSource(o.source), price: o.price, observedAt: o.ts, observedAtMode: o.mode });

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
      low = { price: o.low, source: o.source, family: sourceFamily(o.source), barEndTs: o.ts, intervalSec: o.intervalSec };
    }
    if (Math.abs(deviationBps(o.high, o.price)) <= BAR_WICK_GUARD_BPS && (!high || o.high > high.price)) {
      high = { price: o.high, source: o.source, family: sourceFamily(o.source), barEndTs: o.ts, intervalSec: o.intervalSec };
    }
  }
  return { low, high };
}

/**
 * Supply (USD) at `ts` from a coin's ascending daily history, carried forward. Live slots without
 * history use the current supply; backfill slots before the first history point are unknown (no
 * floor, not large-cap): a dead coin's current supply says nothing about its past.
 */
function supplyAt(history: { dayTs: number; usd: number }[], ts: number, current: number | null, live: boolean): { usd: number | null; source: Slot["supplySource"] } {
  let lo = 0, hi = history.length - 1, found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (history[mid].dayTs <= ts) { found = mid; lo = mid + 1; } else hi = mid - 1;
  }
  if (found >= 0) return { usd: history[found].usd, source: "history" };
  return live && current !== null ? { usd: current, source: "current" } : { usd: null, source: "unknown" };
}

/** Builds a coin's slots: last quote per source per 15-minute slot, judged against the slot's reference. */
export function buildSlots(obs: Obs[], pegCurrency: string, supplyHistory: { dayTs: number; usd: number }[], currentSupply: number | null): Slot[] {
  const bySlot = new Map<number, Map<string, Obs>>();
  const barsBySlot = new Map<number, Obs[]>();
  for (const o of obs) {
    const ts = Math.ceil(o.ts / SLOT_SEC) * SLOT_SEC;
    const m = bySlot.get(ts) ?? new Map<string, Obs>();
    const prev = m.get(o.source);
    if (!prev || o.ts >= prev.ts) m.set(o.source, o);
    bySlot.set(ts, m);
    if (o.low !== o.high) barsBySlot.set(ts, [...(barsBySlot.get(ts) ?? []), o]);
  }
  return [...bySlot.entries()].sort(([a], [b]) => a - b).map(([ts, m]) => {
    const extremes = barExtremes(barsBySlot.get(ts) ?? []);
    const latest = [...m.values()].sort((a, b) => b.ts - a.ts || a.source.localeCompare(b.source));
    const ref = usableReference(latest[0], pegCurrency);
    const quotes = latest.map(toQuote).sort((a, b) => a.source.localeCompare(b.source));
    const live = latest.some((o) => o.kind === "live");
    const supply = supplyAt(supplyHistory, ts, currentSupply, live);
    return {
      ts, consensus: computeConsensus(quotes, ref), quotes, pegReference: ref, referenceSource: latest[0].referenceSource,
      supplyUsd: supply.usd, supplySource: supply.source, kind: live ? "live" : "backfill",
      cadenceSec: Math.max(...latest.map((o) => o.intervalSec)),
      barLow: extremes.low, barHigh: extremes.high,
    };
  });
}

const j = (v: unknown) => JSON.stringify(v);
const ROW_COLUMNS = {
  id: "BIGINT", stablecoin_id: "VARCHAR", symbol: "VARCHAR", peg_type: "VARCHAR", direction: "VARCHAR", peak_deviation_bps: "BIGINT",
  started_at: "BIGINT", ended_at: "BIGINT", start_price: "DOUBLE", peak_price: "DOUBLE", recovery_price: "DOUBLE", peg_reference: "DOUBLE",
  source: "VARCHAR", confirmation_sources: "VARCHAR", pending_reason: "VARCHAR", close_reason: "VARCHAR", constituent_event_count: "BIGINT",
  provenance_json: "VARCHAR", trace_json: "VARCHAR", source_families: "VARCHAR",
} as const;
const eventRow = (e: DepegEventRow): Row => ({
  id: e.id, stablecoin_id: e.stablecoinId, symbol: e.symbol, peg_type: e.pegType, direction: e.direction, peak_deviation_bps: e.peakDeviationBps,
  started_at: e.startedAt, ended_at: e.endedAt, start_price: e.startPrice, peak_price: e.peakPrice, recovery_price: e.recoveryPrice,
  peg_reference: e.pegReference, source: e.source, confirmation_sources: e.confirmationSources, pending_reason: e.pendingReason,
  close_reason: e.closeReason, constituent_event_count: e.constituentEventCount, provenance_json: j(e.provenance), trace_json: j(e.trace),
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
}

/**
 * Current price of one coin at `asOf` (Unix s): the consensus (price-consensus.ts) of the newest live
 * quote per source observed in the CURRENT_QUOTE_WINDOW_SEC before as-of, judged against the usable
 * reference of the newest quote. `judged` false (NAV token or floating peg) gives `nav-token` /
 * `floating-peg` first; a missing usable reference gives `no-reference`. The confidence label is the
 * consensus's own: a price resting on one source is `single-source` whether or not it can be judged
 * (`low` means only that sources diverge). Without current quotes: price null, source `missing`.
 */
export function currentConsensus(obs: Obs[], pegCurrency: string, asOf: number, flags: { navToken?: boolean; floatingPeg?: boolean } = {}): CurrentPrice {
  const latest = new Map<string, Obs>();
  for (const o of obs) {
    if (o.kind !== "live" || o.ts < asOf - CURRENT_QUOTE_WINDOW_SEC) continue;
    const p = latest.get(o.source);
    if (!p || o.ts >= p.ts) latest.set(o.source, o);
  }
  const quotes = [...latest.values()];
  if (!quotes.length) return { consensus: computeConsensus([], null), reference: null, referenceSource: null, unjudgedReason: null };
  const newest = [...quotes].sort((a, b) => b.ts - a.ts)[0];
  const reference = usableReference(newest, pegCurrency);
  const unjudgedReason: UnjudgedReason | null = flags.navToken ? "nav-token" : flags.floatingPeg ? "floating-peg" : reference === null ? "no-reference" : null;
  return { consensus: computeConsensus(quotes.map(toQuote), reference), reference, referenceSource: newest.referenceSource, unjudgedReason };
}

/** The peg monitor as a DAG node (reads observations, references, supply; writes grid, events, current prices). */
export const pegMonitor: Analytic = {
  name: "peg_monitor",
  inputs: {
    obs: `select o.stablecoin_id, o.peg_type, o.source, o.category, o.kind, o.ts::integer as ts, o.interval_sec::integer as interval_sec,
            o.price_usd, o.low_usd, o.high_usd, o.observed_at_mode, r.reference_usd, r.reference_source
          from int_price_observations o
          left join int_peg_references r on r.peg_type = o.peg_type and r.day = cast(make_timestamp(o.ts * 1000000) as date)
          order by o.stablecoin_id, o.ts, o.source`,
    coins: "select id, symbol, peg_type, peg_currency, nav_token, floating_peg from registry_coins order by id",
    supplyHistory: `select stablecoin_id, epoch(date)::integer as day_ts, usd from int_supply_history_points where usd is not null
          qualify row_number() over (partition by stablecoin_id, date order by priority, source) = 1
          order by stablecoin_id, day_ts`,
    supplyCurrent: "select stablecoin_id, circulating_usd from int_coins_supply_usd where circulating_usd is not null order by stablecoin_id",
  },
  outputs: {
    price_consensus_slots: {
      stablecoin_id: "VARCHAR", slot_ts: "BIGINT", price: "DOUBLE", price_source: "VARCHAR", price_confidence: "VARCHAR", agree_sources: "VARCHAR",
      consensus_sources: "VARCHAR", peg_reference: "DOUBLE", reference_source: "VARCHAR", deviation_bps: "BIGINT", kind: "VARCHAR", quotes_json: "VARCHAR",
    },
    price_current: {
      stablecoin_id: "VARCHAR", price: "DOUBLE", price_source: "VARCHAR", price_confidence: "VARCHAR", consensus_sources_json: "VARCHAR",
      agree_sources_json: "VARCHAR", price_observed_at: "BIGINT", price_observed_at_mode: "VARCHAR", price_synced_at: "BIGINT",
      peg_reference: "DOUBLE", reference_source: "VARCHAR", deviation_bps: "BIGINT", unjudged_reason: "VARCHAR",
    },
    price_observation_rejections: { stablecoin_id: "VARCHAR", source: "VARCHAR", ts: "BIGINT", price_usd: "DOUBLE", reason: "VARCHAR" },
    source_quality_daily: {
      stablecoin_id: "VARCHAR", date: "VARCHAR", judged: "BOOLEAN", slots: "BIGINT", sources_quoted: "VARCHAR", families_quoted: "VARCHAR",
      disagreeing_sources: "VARCHAR", stuck_sources: "VARCHAR", rejected_quotes: "BIGINT", rejected_json: "VARCHAR",
      consensus_low: "DOUBLE", consensus_high: "DOUBLE", high_confidence_slots: "BIGINT",
    },
    depeg_event_rows: { ...ROW_COLUMNS },
    depeg_incidents: { ...ROW_COLUMNS },
    depeg_pending: {
      stablecoin_id: "VARCHAR", symbol: "VARCHAR", direction: "VARCHAR", first_seen_at: "BIGINT", last_seen_at: "BIGINT", first_seen_bps: "BIGINT",
      last_seen_bps: "BIGINT", peak_seen_bps: "BIGINT", reason: "VARCHAR", age_sec: "BIGINT", expires_at: "BIGINT",
      available_categories_json: "VARCHAR", missing_categories_json: "VARCHAR",
    },
  },
  run(inputs, { asOf }) {
    const coins = new Map(inputs.coins.map((c) => [c.id as string, c]));
    const group = <T>(rows: Row[], f: (r: Row) => T) => {
      const m = new Map<string, T[]>();
      for (const r of rows) { const k = r.stablecoin_id as string; const a = m.get(k); if (a) a.push(f(r)); else m.set(k, [f(r)]); }
      return m;
    };
    const obsBy = group<Obs>(inputs.obs, (r) => ({
      source: r.source, category: r.category, kind: r.kind, ts: r.ts, intervalSec: r.interval_sec, price: r.price_usd === null ? NaN : Number(r.price_usd),
      low: r.low_usd === null ? NaN : Number(r.low_usd), high: r.high_usd === null ? NaN : Number(r.high_usd),
      mode: r.observed_at_mode, reference: r.reference_usd === null ? null : Number(r.reference_usd), referenceSource: r.reference_source ?? "missing",
    }));
    const histBy = group(inputs.supplyHistory, (r) => ({ dayTs: r.day_ts as number, usd: Number(r.usd) }));
    const current = new Map(inputs.supplyCurrent.map((r) => [r.stablecoin_id as string, Number(r.circulating_usd)]));
    const tables: Record<string, Row[]> = { price_consensus_slots: [], price_current: [], price_observation_rejections: [], source_quality_daily: [], depeg_event_rows: [], depeg_incidents: [], depeg_pending: [] };
    const rejected: Record<string, number> = {};
    let expired = 0;
    for (const id of [...obsBy.keys()].sort()) {
      const coin = coins.get(id)!;
      // NAV tokens and floating pegs: consensus prices yes, judgement against a fixed reference no.
      const judged = !coin.nav_token && !coin.floating_peg;
      const { kept, rejected: rej } = filterObservations(obsBy.get(id)!, coin.peg_currency, coin.peg_type, judged);
      for (const r of rej) {
        rejected[r.reason] = (rejected[r.reason] ?? 0) + 1;
        tables.price_observation_rejections.push({ stablecoin_id: id, source: r.obs.source, ts: r.obs.ts, price_usd: Number.isFinite(r.obs.price) ? r.obs.price : null, reason: r.reason });
      }
      const slots = buildSlots(kept, coin.peg_currency, histBy.get(id) ?? [], current.get(id) ?? null);
      for (const s of slots) {
        tables.price_consensus_slots.push({
          stablecoin_id: id, slot_ts: s.ts, price: s.consensus.price, price_source: s.consensus.priceSource, price_confidence: s.consensus.priceConfidence,
          agree_sources: s.consensus.agreeSources.join("+"), consensus_sources: s.consensus.consensusSources.join("+"), peg_reference: s.pegReference,
          reference_source: s.referenceSource, deviation_bps: s.pegReference !== null && s.consensus.price !== null ? deviationBps(s.consensus.price, s.pegReference) : null,
          kind: s.kind, quotes_json: j(s.quotes.map((q) => [q.source, q.category, q.price])),
        });
      }
      const cur = currentConsensus(kept, coin.peg_currency, asOf, { navToken: Boolean(coin.nav_token), floatingPeg: Boolean(coin.floating_peg) });
      const c = cur.consensus;
      tables.price_current.push({
        stablecoin_id: id, price: c.price, price_source: c.priceSource, price_confidence: c.priceConfidence,
        consensus_sources_json: j(c.consensusSources), agree_sources_json: j(c.agreeSources), price_observed_at: c.observedAt,
        price_observed_at_mode: c.observedAtMode, price_synced_at: c.price === null ? null : asOf, peg_reference: cur.reference,
        reference_source: cur.referenceSource, deviation_bps: cur.reference !== null && c.price !== null ? deviationBps(c.price, cur.reference) : null,
        unjudged_reason: c.price === null ? null : cur.unjudgedReason,
      });
      tables.source_quality_daily.push(...sourceQualityDays(id, judged, obsBy.get(id)!, rej, slots));
      if (!judged) continue;
      const det = detectDepegs({ stablecoinId: id, symbol: coin.symbol, pegType: coin.peg_type }, slots, asOf);
      expired += det.expiredPending;
      for (const r of det.rows) tables.depeg_event_rows.push(eventRow(r));
      for (const r of linkIncidents(det.rows)) tables.depeg_incidents.push(eventRow(r));
      if (det.pending) tables.depeg_pending.push(pendingRow(det.pending));
    }
    if (expired) rejected["pending-expired-unconfirmed"] = expired;
    return { tables, rejected };
  },
};

const dayOf = (ts: number) => new Date(ts * 1000).toISOString().slice(0, 10);
const joinSorted = (xs: Iterable<string>) => [...new Set(xs)].sort().join("+");

/**
 * Per UTC day of one coin (slot end ts − 1 s decides the day): the sources quoted, their families,
 * sources whose quote sat outside the agreement window of a slot's consensus, stuck sources, and
 * rejected quotes by source and rule — so every consensus price can be audited.
 */
function sourceQualityDays(id: string, judged: boolean, obs: Obs[], rejected: { obs: Obs; reason: string }[], slots: Slot[]): Row[] {
  type Day = { sources: Set<string>; disagree: Set<string>; stuck: Set<string>; rejected: Record<string, Record<string, number>>; nRejected: number; slots: number; high: number; lo: number | null; hi: number | null };
  const days = new Map<string, Day>();
  const day = (ts: number) => {
    const k = dayOf(ts - 1);
    let d = days.get(k);
    if (!d) { d = { sources: new Set(), disagree: new Set(), stuck: new Set(), rejected: {}, nRejected: 0, slots: 0, high: 0, lo: null, hi: null }; days.set(k, d); }
    return d;
  };
  for (const o of obs) day(o.ts).sources.add(o.source);
  for (const r of rejected) {
    const d = day(r.obs.ts);
    d.nRejected++;
    const bySrc = (d.rejected[r.obs.source] ??= {});
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
  return [...days.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([date, d]) => ({
    stablecoin_id: id, date, judged, slots: d.slots, sources_quoted: joinSorted(d.sources), families_quoted: joinSorted([...d.sources].map(sourceFamily)),
    disagreeing_sources: joinSorted(d.disagree), stuck_sources: joinSorted(d.stuck), rejected_quotes: d.nRejected,
    rejected_json: j(Object.fromEntries(Object.entries(d.rejected).sort(([a], [b]) => a.localeCompare(b)))),
    consensus_low: d.lo, consensus_high: d.hi, high_confidence_slots: d.high,
  }));
}

const pendingRow = (p: PendingIncident): Row => ({
  stablecoin_id: p.stablecoinId, symbol: p.symbol, direction: p.direction, first_seen_at: p.firstSeenAt, last_seen_at: p.lastSeenAt,
  first_seen_bps: p.firstSeenBps, last_seen_bps: p.lastSeenBps, peak_seen_bps: p.peakSeenBps, reason: p.reason, age_sec: p.ageSec,
  expires_at: p.expiresAt, available_categories_json: j(p.availableConfirmationCategories), missing_categories_json: j(p.missingConfirmationCategories),
});
