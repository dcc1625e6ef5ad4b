import { describe, expect, it } from "vitest";
import { depegEventId, detectDepegs, linkIncidents, type Slot } from "../../pipelines/analytics/depeg-detection.ts";
import { buildSlots, currentConsensus, filterObservations, pegMonitor } from "../../pipelines/analytics/peg-monitor.ts";
import { pegScore } from "../../pipelines/analytics/peg-score.ts";
import { pegScoreUnavailableReason } from "../../pipelines/analytics/peg-summary.ts";
import { computeConsensus, type Quote } from "../../pipelines/analytics/price-consensus.ts";

const T0 = Date.parse("2024-01-01T00:00:00Z") / 1000;
/** A quote whose family is its source, except Alchemy (a declared copy of CoinGecko). */
const q = (source: string, price: number, category: Quote["category"] = "off-chain"): Quote =>
  ({ source, category, family: source === "alchemy" ? "coingecko" : source, copied: source === "alchemy", price, observedAt: T0, observedAtMode: "upstream" });

describe("price consensus", () => {
  it("takes the median of the largest agreeing cluster and joins its labels", () => {
    const c = computeConsensus([q("coingecko", 1.0002), q("binance", 0.9998, "CEX"), q("defillama", 0.95)], 1);
    expect(c.priceConfidence).toBe("high");
    expect(c.priceSource).toBe("binance+coingecko");
    expect(c.price).toBeCloseTo((1.0002 + 0.9998) / 2, 10);
    expect(c.consensusSources).toEqual(["binance", "coingecko", "defillama"]);
  });

  it("is high only across independent families: a copied series is not a second source; low when nothing agrees; missing without quotes", () => {
    expect(computeConsensus([q("coingecko", 1), q("alchemy", 1)], 1).priceConfidence).toBe("single-source");
    expect(computeConsensus([q("coingecko", 1), q("defillama", 1.001)], 1).priceConfidence).toBe("high");
    const low = computeConsensus([q("coingecko", 0.97), q("binance", 0.9, "CEX")], 1);
    expect(low.priceConfidence).toBe("low");
    expect(low.priceSource).toBe("binance"); // market tier beats aggregator tier
    const none = computeConsensus([q("coingecko", Number.NaN), q("defillama", -1)], 1);
    expect(none).toMatchObject({ price: null, priceSource: "missing", priceConfidence: null });
  });

  it("needs pairwise agreement: 1.000 / 1.004 / 1.008 is not one cluster", () => {
    const c = computeConsensus([q("a", 1.0), q("b", 1.004), q("c", 1.008)], 1);
    expect(c.agreeSources).toHaveLength(2);
  });
});

/** A slot whose consensus is the median of its quotes (tests pick agreeing or single quotes). */
function slot(ts: number, quotes: Quote[], extra: Partial<Slot> = {}): Slot {
  return {
    ts, consensus: computeConsensus(quotes, 1), quotes, pegReference: 1, referenceSource: "par", supplyUsd: 50_000_000, supplySource: "history",
    kind: "backfill", cadenceSec: 900, ...extra,
  };
}
const coin = { stablecoinId: "abc-issuer", symbol: "ABC", pegType: "peggedUSD" };
const H = 3600;

describe("depeg detection", () => {
  it("opens a small coin's event at the first crossing, keeps the worst peak, closes on recovery", () => {
    const slots = [slot(T0, [q("coingecko", 0.995)]), slot(T0 + 900, [q("coingecko", 0.985)]), slot(T0 + 1800, [q("coingecko", 0.96)]),
      slot(T0 + 2700, [q("coingecko", 0.97)]), slot(T0 + 3600, [q("coingecko", 0.999)])];
    const { rows } = detectDepegs(coin, slots, T0 + 10 * H);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ direction: "below", startedAt: T0 + 900, startPrice: 0.985, peakDeviationBps: -400, peakPrice: 0.96,
      endedAt: T0 + 3600, recoveryPrice: 0.999, closeReason: "recovered-primary", pendingReason: null, source: "backfill" });
    expect(rows[0].id).toBe(depegEventId("abc-issuer", T0 + 900, "backfill"));
  });

  it("holds a large-cap move pending until a second source agrees; the event starts where the run started", () => {
    const big = { supplyUsd: 40e9 };
    const slots = [slot(T0, [q("coingecko", 0.98)], big), slot(T0 + 900, [q("coingecko", 0.95)], big),
      slot(T0 + 1800, [q("coingecko", 0.93), q("binance", 0.931, "CEX")], big), slot(T0 + 2700, [q("coingecko", 1), q("binance", 1, "CEX")], big)];
    const { rows } = detectDepegs(coin, slots, T0 + 10 * H);
    expect(rows).toHaveLength(1);
    expect(rows[0].startedAt).toBe(T0);
    expect(rows[0].pendingReason).toBe("large-cap");
    expect(rows[0].confirmationSources).toBe("CEX+coingecko");
    expect(rows[0].trace.opened.ts).toBe(T0 + 1800);
    // without the second source the move stays pending and is reported as such at as-of
    const alone = detectDepegs(coin, slots.slice(0, 2), T0 + 1800);
    expect(alone.rows).toHaveLength(0);
    expect(alone.pending).toMatchObject({ firstSeenAt: T0, peakSeenBps: -500, reason: "large-cap", availableConfirmationCategories: ["off-chain"] });
  });

  it("daily history: one point waits for a second day; a crash of 5000 bps counts at once", () => {
    const day = (d: number, p: number) => slot(T0 + d * 86400, [q("defillama", p)], { cadenceSec: 86400 });
    expect(detectDepegs(coin, [day(0, 1), day(1, 0.97), day(2, 1)], T0 + 30 * 86400).rows).toHaveLength(0);
    const two = detectDepegs(coin, [day(0, 1), day(1, 0.97), day(2, 0.96), day(3, 1)], T0 + 30 * 86400).rows;
    expect(two).toHaveLength(1);
    expect(two[0]).toMatchObject({ startedAt: T0 + 86400, pendingReason: "single-daily-point", provenance: { confirmationPolicy: "two-point-daily" } });
    const crash = detectDepegs(coin, [day(0, 1), day(1, 0.3)], T0 + 30 * 86400).rows;
    expect(crash).toHaveLength(1);
    expect(crash[0]).toMatchObject({ peakDeviationBps: -7000, endedAt: null, closeReason: null });
  });

  it("a direction flip supersedes the open event; missing reference judges nothing", () => {
    const { rows } = detectDepegs(coin, [slot(T0, [q("coingecko", 0.97)]), slot(T0 + 900, [q("coingecko", 1.03)])], T0 + H);
    expect(rows.map((r) => [r.direction, r.closeReason])).toEqual([["below", "superseded-direction"], ["above", null]]);
    expect(rows[0].recoveryPrice).toBeNull();
    const eur = { ...coin, pegType: "peggedEUR" };
    expect(detectDepegs(eur, [slot(T0, [q("coingecko", 0.5)], { pegReference: null, referenceSource: "fx-fallback" })], T0 + H).rows).toHaveLength(0);
  });

  it("links rows of one direction re-opened within 6 h into one incident", () => {
    const slots = [slot(T0, [q("c", 0.97)]), slot(T0 + H, [q("c", 1)]), slot(T0 + 3 * H, [q("c", 0.95)]), slot(T0 + 4 * H, [q("c", 1)]),
      slot(T0 + 20 * H, [q("c", 0.98)]), slot(T0 + 21 * H, [q("c", 1)])];
    const { rows } = detectDepegs(coin, slots, T0 + 30 * H);
    expect(rows).toHaveLength(3);
    const incidents = linkIncidents(rows);
    expect(incidents).toHaveLength(2);
    expect(incidents[0]).toMatchObject({ startedAt: T0, startPrice: 0.97, endedAt: T0 + 4 * H, peakDeviationBps: -500, constituentEventCount: 2, id: rows[0].id });
    expect(incidents[1].constituentEventCount).toBe(1);
  });
});

describe("observation quality", () => {
  const obs = (source: string, ts: number, price: number) => ({ source, category: "off-chain" as const, kind: "backfill" as const, ts, intervalSec: 86400, price, low: price, high: price, mode: "upstream" as const, reference: 1, referenceSource: "par" });
  it("rejects non-positive prices, prices above 1.19x the reference and uncorroborated one-point spikes", () => {
    const input = [obs("a", T0, 1), obs("a", T0 + 86400, 0.5), obs("a", T0 + 2 * 86400, 1), obs("a", T0 + 3 * 86400, 0), obs("a", T0 + 4 * 86400, 1.5), obs("a", T0 + 5 * 86400, 1)];
    const { kept, rejected } = filterObservations(input, "USD");
    expect(rejected.map((r) => [r.obs.ts - T0, r.reason]).sort()).toEqual([[3 * 86400, "price-non-positive-or-nan"], [4 * 86400, "above-price-bound"], [86400, "single-source-spike"]].sort());
    expect(kept).toHaveLength(3);
    // a second source at the same time corroborates the move: kept
    const corroborated = filterObservations([...input.slice(0, 3), obs("b", T0 + 86400, 0.51)], "USD");
    expect(corroborated.rejected).toHaveLength(0);
  });
});

describe("stuck quotes, coverage gaps, bar peaks, independent families", () => {
  const D = 86400;
  const obs = (source: string, ts: number, price: number, extra: { low?: number; high?: number; intervalSec?: number } = {}) => ({
    source, category: (source === "binance" ? "CEX" : "off-chain") as "CEX" | "off-chain", kind: "backfill" as const, ts, intervalSec: extra.intervalSec ?? D,
    price, low: extra.low ?? price, high: extra.high ?? price, mode: "upstream" as const, reference: 1, referenceSource: "par",
  });

  it("refuses a quote repeated unchanged for ≥ 24 h beyond the threshold (the whole run), keeps repeats at peg", () => {
    const input = [obs("a", T0, 1), obs("a", T0 + D, 0.1455), obs("a", T0 + 2 * D, 0.1455), obs("a", T0 + 3 * D, 0.1455), obs("a", T0 + 4 * D, 1), obs("a", T0 + 5 * D, 1)];
    const { kept, rejected } = filterObservations(input, "USD");
    expect(rejected.map((r) => [r.obs.ts - T0, r.reason])).toEqual([[D, "stuck-quote"], [2 * D, "stuck-quote"], [3 * D, "stuck-quote"]]);
    expect(kept.map((o) => o.price)).toEqual([1, 1, 1]);
    // the same prices from a coin that is not judged against par (NAV token) are kept
    expect(filterObservations(input, "USD", "peggedUSD", false).rejected).toHaveLength(0);
    // nothing stuck leaves nothing for detection: the stale price opens no incident
    const slots = buildSlots(kept, "USD", [], null);
    expect(detectDepegs(coin, slots, T0 + 10 * D).rows).toHaveLength(0);
  });

  it("claims no duration across a gap it did not observe: the event ends at its last observed slot", () => {
    const day = (d: number, p: number) => slot(T0 + d * D, [q("defillama", p)], { cadenceSec: D });
    const { rows } = detectDepegs(coin, [day(0, 0.5), day(1, 0.5), day(800, 1)], T0 + 900 * D);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ startedAt: T0, endedAt: T0 + 2 * D, closeReason: "orphan-tracking-removed", recoveryPrice: null });
    // an event seen in one slot only still ends after it starts
    const one = detectDepegs(coin, [day(0, 1), day(1, 0.3), day(900, 1)], T0 + 901 * D).rows;
    expect(one[0]).toMatchObject({ startedAt: T0 + D, endedAt: T0 + 2 * D, closeReason: "orphan-tracking-removed" });
  });

  it("takes the peak from a guarded bar low and names the bar; a wick far from its close is ignored", () => {
    const bars = [
      obs("binance", T0 + 60, 0.9121, { low: 0.882, high: 1, intervalSec: 60 }),
      obs("binance", T0 + 120, 0.9136, { low: 0.5, high: 0.917, intervalSec: 60 }), // 4000+ bps below its close: a one-print wick
      obs("coingecko", T0 + 900, 0.906, { low: 0.8994, high: 0.93, intervalSec: 900 }),
      obs("binance", T0 + 1800, 1, { low: 0.999, high: 1.001, intervalSec: 60 }), obs("coingecko", T0 + 1800, 1, { low: 0.999, high: 1.001, intervalSec: 900 }),
    ];
    const slots = buildSlots(bars, "USD", [], null);
    expect(slots[0].barLow).toMatchObject({ price: 0.882, source: "binance", barEndTs: T0 + 60 });
    const { rows } = detectDepegs(coin, slots, T0 + D);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ peakDeviationBps: -1180, peakPrice: 0.882, families: ["binance", "coingecko"] });
    expect(rows[0].trace.peak.bar).toMatchObject({ source: "binance", barEndTs: T0 + 60 });
    // at peg, a bar low never sets a peak (the slot consensus does not show the condition)
    const calm = buildSlots([obs("binance", T0 + 60, 1, { low: 0.95, high: 1, intervalSec: 60 })], "USD", [], null);
    expect(detectDepegs(coin, calm, T0 + D).rows).toHaveLength(0);
  });

  it("a move seen only in a copied series opens nothing, however long it lasts", () => {
    const day = (d: number, p: number) => slot(T0 + d * D, [q("alchemy", p)], { cadenceSec: D });
    expect(detectDepegs(coin, [day(0, 1), day(1, 0.96), day(2, 0.95), day(3, 0.96), day(4, 1)], T0 + 10 * D).rows).toHaveLength(0);
  });

  it("a large-cap move seen only by a series and its copy stays pending; a second family confirms it", () => {
    const big = { supplyUsd: 5e9 };
    const copied = [slot(T0, [q("coingecko", 0.967), q("alchemy", 0.967)], big), slot(T0 + 900, [q("coingecko", 0.966), q("alchemy", 0.966)], big)];
    expect(detectDepegs(coin, copied, T0 + 1800).rows).toHaveLength(0);
    const independent = [slot(T0, [q("coingecko", 0.967), q("alchemy", 0.967), q("defillama", 0.9625)], big)];
    const { rows } = detectDepegs(coin, independent, T0 + 1800);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ confirmationSources: "coingecko+defillama", families: ["coingecko", "defillama"], provenance: { confidenceTier: "high" } });
  });
});

describe("peg score", () => {
  it("is null, with a reason, for NAV tokens, floating pegs, coins without a price or with too little history", () => {
    const base = { navToken: false, floatingPeg: false, pricedDays: 400, hasCurrentPrice: true };
    expect(pegScoreUnavailableReason(base)).toBeNull();
    expect(pegScoreUnavailableReason({ ...base, navToken: true })).toBe("nav-token");
    expect(pegScoreUnavailableReason({ ...base, floatingPeg: true })).toBe("floating-peg");
    expect(pegScoreUnavailableReason({ ...base, pricedDays: 0, hasCurrentPrice: false })).toBe("no-price");
    expect(pegScoreUnavailableReason({ ...base, hasCurrentPrice: false })).toBe("no-current-price");
    expect(pegScoreUnavailableReason({ ...base, pricedDays: 29 })).toBe("insufficient-history");
  });

  const DAY = 86400;
  const now = T0 + 1000 * DAY;
  it("is 100 for a coin never off peg, null under 7 days of tracking", () => {
    expect(pegScore([], now - 365 * DAY, now).pegScore).toBe(100);
    expect(pegScore([], now - 3 * DAY, now).pegScore).toBeNull();
  });
  it("follows the documented formula for one closed incident", () => {
    // 10 days at −500 bps, 100..90 days ago, tracked for 365 days:
    // pegPct = (1 − 10/365)·100 = 97.2603; recency = 1/(1 + 100/365.25) = 0.785061;
    // penalty = max(5·(10/30)·0.785061, 0.25·0.785061) = 1.308435; severity = 98.691565;
    // score = round(0.5·97.2603 + 0.5·98.691565) = round(97.976) = 98.
    const s = pegScore([{ startedAt: now - 100 * DAY, endedAt: now - 90 * DAY, peakDeviationBps: -500, constituentEventCount: 1 }], now - 365 * DAY, now);
    expect(s.pegPct).toBeCloseTo(97.26, 2);
    expect(s.severityScore).toBeCloseTo(98.69, 2);
    expect(s.pegScore).toBe(98);
    expect(s.activeDepeg).toBe(false);
  });
  it("counts only observed time as time at peg", () => {
    // 10 days in depeg; the window spans 365 days but prices exist on only 100 of them → 90% at peg, not 97.26%.
    const inc = [{ startedAt: now - 100 * DAY, endedAt: now - 90 * DAY, peakDeviationBps: -500, constituentEventCount: 1 }];
    expect(pegScore(inc, now - 365 * DAY, now, 100 * DAY).pegPct).toBeCloseTo(90, 6);
  });
  it("penalises an open incident and reports it active", () => {
    const s = pegScore([{ startedAt: now - DAY, endedAt: null, peakDeviationBps: -2000, constituentEventCount: 1 }], now - 365 * DAY, now);
    expect(s.activeDepeg).toBe(true);
    expect(s.activePenalty).toBe(40); // min(50, max(5, 2000/50))
    // pegPct = (1 − 1/365)·100 = 99.726; severity = 100 − max(20·(1/30)·r, 1·r) with r = 1/(1 + 1/365.25) = 0.99727
    // → 99.003; score = round(0.5·99.726 + 0.5·99.003 − 40) = round(59.36) = 59.
    expect(s.pegScore).toBe(59);
  });
});

describe("current price confidence (spec 2.2: `low` only when sources diverge)", () => {
  const AS_OF = T0 + 30 * 86400;
  /** A live quote one hour before as-of; `reference` null with `fx-fallback` = a non-USD peg whose ECB rate is stale. */
  const live = (source: string, price: number, reference: number | null, referenceSource: string) => ({
    source, category: "off-chain" as const, kind: "live" as const, ts: AS_OF - 3600, intervalSec: 0, price, low: price, high: price,
    mode: "upstream" as const, reference, referenceSource,
  });

  it("a non-USD coin priced by one source without a usable reference is `single-source`, not judged (`no-reference`)", () => {
    const cur = currentConsensus([live("defillama", 0.7776, null, "fx-fallback")], "SGD", AS_OF);
    expect(cur.consensus).toMatchObject({ price: 0.7776, priceSource: "defillama", priceConfidence: "single-source", consensusSources: ["defillama"] });
    expect(cur).toMatchObject({ reference: null, referenceSource: "fx-fallback", unjudgedReason: "no-reference" });
  });

  it("is `low` only when its sources diverge, reference or not; `high` when two families agree", () => {
    const diverge = currentConsensus([live("defillama", 0.70, null, "fx-fallback"), live("coingecko", 0.78, null, "fx-fallback")], "SGD", AS_OF);
    expect(diverge.consensus.priceConfidence).toBe("low");
    expect(diverge.unjudgedReason).toBe("no-reference");
    const agree = currentConsensus([live("defillama", 0.7776, null, "fx-fallback"), live("coingecko", 0.7778, null, "fx-fallback")], "SGD", AS_OF);
    expect(agree.consensus.priceConfidence).toBe("high");
    const judged = currentConsensus([live("defillama", 0.7776, 0.7777, "fx")], "SGD", AS_OF);
    expect(judged).toMatchObject({ reference: 0.7777, unjudgedReason: null, consensus: { priceConfidence: "single-source" } });
  });

  it("NAV tokens and floating pegs are not judged, whatever their reference", () => {
    expect(currentConsensus([live("defillama", 1.08, 1, "par")], "USD", AS_OF, { navToken: true }).unjudgedReason).toBe("nav-token");
    expect(currentConsensus([live("defillama", 4.7, null, "floating")], "VAR", AS_OF, { floatingPeg: true }).unjudgedReason).toBe("floating-peg");
  });

  it("the published price_current row keeps the consensus label and records the missing reference separately", () => {
    const obsRow = (id: string, pegType: string, price: number, reference: number | null, referenceSource: string) => ({
      stablecoin_id: id, peg_type: pegType, source: "defillama", category: "off-chain", kind: "live", ts: AS_OF - 3600, interval_sec: 0,
      price_usd: price, low_usd: price, high_usd: price, observed_at_mode: "upstream", reference_usd: reference, reference_source: referenceSource,
    });
    const coin = (id: string, pegType: string, pegCurrency: string) => ({ id, symbol: id.toUpperCase(), peg_type: pegType, peg_currency: pegCurrency, nav_token: false, floating_peg: false });
    const out = pegMonitor.run({
      obs: [obsRow("usdx-issuer", "peggedUSD", 1.0001, 1, "par"), obsRow("xsgd-straitsx", "peggedSGD", 0.7776, null, "fx-fallback")],
      coins: [coin("usdx-issuer", "peggedUSD", "USD"), coin("xsgd-straitsx", "peggedSGD", "SGD")],
      supplyHistory: [], supplyCurrent: [],
    }, { asOf: AS_OF });
    const rows = Object.fromEntries(out.tables.price_current.map((r) => [r.stablecoin_id, r]));
    expect(rows["xsgd-straitsx"]).toMatchObject({ price_confidence: "single-source", unjudged_reason: "no-reference", deviation_bps: null, reference_source: "fx-fallback" });
    expect(rows["usdx-issuer"]).toMatchObject({ price_confidence: "single-source", unjudged_reason: null, deviation_bps: 1, reference_source: "par" });
    // not judged: no depeg rows for the coin without a reference
    expect(out.tables.depeg_event_rows.filter((r) => r.stablecoin_id === "xsgd-straitsx")).toHaveLength(0);
  });
});
