import { describe, expect, it } from "vitest";
import { depegEventId, detectDepegs, linkIncidents, type Slot } from "../../pipelines/analytics/depeg-detection.ts";
import { buildSlots, currentConsensus, filterObservations, pegMonitor } from "../../pipelines/analytics/peg-monitor.ts";
import { pegScore } from "../../pipelines/analytics/peg-score.ts";
import { pegScoreUnavailableReason } from "../../pipelines/analytics/peg-summary.ts";
import { computeConsensus, type Quote } from "../../pipelines/analytics/price-consensus.ts";

const T0 = Date.parse("2024-01-01T00:00:00Z") / 1000;
/** A quote whose family is its source, except Alchemy (a declared copy of CoinGecko). */
const q = (source: string, price: number, category: Quote["category"] = "off-chain"): Quote => ({
  source,
  category,
  family: source === "alchemy" ? "coingecko" : source,
  copied: source === "alchemy",
  price,
  observedAt: T0,
  observedAtMode: "upstream",
});

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
    ts,
    consensus: computeConsensus(quotes, 1),
    quotes,
    pegReference: 1,
    referenceSource: "par",
    supplyUsd: 50_000_000,
    supplySource: "history",
    kind: "backfill",
    cadenceSec: 900,
    ...extra,
  };
}
const coin = { stablecoinId: "abc-issuer", symbol: "ABC", pegType: "peggedUSD" };
const H = 3600;

describe("depeg detection", () => {
  it("opens a small coin's event at the first crossing, keeps the worst peak, closes on recovery", () => {
    const slots = [
      slot(T0, [q("coingecko", 0.995)]),
      slot(T0 + 900, [q("coingecko", 0.985)]),
      slot(T0 + 1800, [q("coingecko", 0.96)]),
      slot(T0 + 2700, [q("coingecko", 0.97)]),
      slot(T0 + 3600, [q("coingecko", 0.999)]),
    ];
    const { rows } = detectDepegs(coin, slots, T0 + 10 * H);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      direction: "below",
      startedAt: T0 + 900,
      startPrice: 0.985,
      peakDeviationBps: -400,
      peakPrice: 0.96,
      endedAt: T0 + 3600,
      recoveryPrice: 0.999,
      closeReason: "recovered-primary",
      pendingReason: null,
      source: "backfill",
    });
    expect(rows[0].id).toBe(depegEventId("abc-issuer", T0 + 900, "backfill"));
  });

  it("holds a large-cap move pending until a second source agrees; the event starts where the run started", () => {
    const big = { supplyUsd: 40e9 };
    const slots = [
      slot(T0, [q("coingecko", 0.98)], big),
      slot(T0 + 900, [q("coingecko", 0.95)], big),
      slot(T0 + 1800, [q("coingecko", 0.93), q("binance", 0.931, "CEX")], big),
      slot(T0 + 2700, [q("coingecko", 1), q("binance", 1, "CEX")], big),
    ];
    const { rows } = detectDepegs(coin, slots, T0 + 10 * H);
    expect(rows).toHaveLength(1);
    expect(rows[0].startedAt).toBe(T0);
    expect(rows[0].pendingReason).toBe("large-cap");
    expect(rows[0].confirmationSources).toBe("CEX+coingecko");
    expect(rows[0].trace.opened.ts).toBe(T0 + 1800);
    // without the second source the move stays pending and is reported as such at as-of
    const alone = detectDepegs(coin, slots.slice(0, 2), T0 + 1800);
    expect(alone.rows).toHaveLength(0);
    expect(alone.pending).toMatchObject({
      firstSeenAt: T0,
      peakSeenBps: -500,
      reason: "large-cap",
      availableConfirmationCategories: ["off-chain"],
    });
  });

  it("daily history: one point waits for a second day; a crash of 5000 bps counts at once", () => {
    const day = (d: number, p: number) => slot(T0 + d * 86400, [q("defillama", p)], { cadenceSec: 86400 });
    expect(detectDepegs(coin, [day(0, 1), day(1, 0.97), day(2, 1)], T0 + 30 * 86400).rows).toHaveLength(0);
    const two = detectDepegs(coin, [day(0, 1), day(1, 0.97), day(2, 0.96), day(3, 1)], T0 + 30 * 86400).rows;
    expect(two).toHaveLength(1);
    expect(two[0]).toMatchObject({
      startedAt: T0 + 86400,
      pendingReason: "single-daily-point",
      provenance: { confirmationPolicy: "two-point-daily" },
    });
    const crash = detectDepegs(coin, [day(0, 1), day(1, 0.3)], T0 + 2 * 86400).rows;
    expect(crash).toHaveLength(1);
    expect(crash[0]).toMatchObject({ peakDeviationBps: -7000, endedAt: null, closeReason: null });
  });

  it("an incident whose coin goes unobserved past the coverage gap is not open at as-of: it ends after its last observation", () => {
    const day = (d: number, p: number) => slot(T0 + d * 86400, [q("defillama", p)], { cadenceSec: 86400 });
    const slots = [day(0, 1), day(1, 0.3)];
    // 3 days (3 × the daily cadence) after the last point the incident is still open …
    expect(detectDepegs(coin, slots, T0 + 4 * 86400).rows[0]).toMatchObject({ endedAt: null, closeReason: null });
    // … one second later tracking is lost: it ends one cadence after day 1, the time that point stands for
    expect(detectDepegs(coin, slots, T0 + 4 * 86400 + 1).rows[0]).toMatchObject({
      endedAt: T0 + 2 * 86400,
      closeReason: "orphan-tracking-removed",
    });
  });

  it("a dead coin is tracked until its tracking ends, then its incident closes and later prints open nothing", () => {
    const day = (d: number, p: number) => slot(T0 + d * 86400, [q("defillama", p)], { cadenceSec: 86400 });
    const slots = [day(0, 1), day(1, 0.3), day(2, 0.2), day(3, 0.1), day(4, 0.05)];
    const alive = detectDepegs(coin, slots, T0 + 4 * 86400, { trackingEndsAt: T0 + 10 * 86400 }).rows;
    expect(alive[0]).toMatchObject({ endedAt: null, peakDeviationBps: -9500 });
    const ended = detectDepegs(coin, slots, T0 + 4 * 86400, { trackingEndsAt: T0 + 2 * 86400 }).rows;
    expect(ended).toHaveLength(1);
    // days 3 and 4 lie after the end of tracking: not judged; the event ends after day 2's point
    expect(ended[0]).toMatchObject({
      endedAt: T0 + 3 * 86400,
      closeReason: "orphan-tracking-removed",
      peakDeviationBps: -8000,
    });
  });

  it("dependency confirmation: a single-family daily breach confirmed by an overlapping incident of a curated dependency", () => {
    const day = (d: number, p: number) => slot(T0 + d * 86400, [q("defillama", p)], { cadenceSec: 86400 });
    // FRAX-like: one daily point at −404 bps, back at peg the next day; the two-point rule drops it
    const slots = [day(0, 0.997), day(1, 0.9596), day(2, 0.9918)];
    expect(detectDepegs(coin, slots, T0 + 3 * 86400).rows).toHaveLength(0);
    // its dependency had a confirmed below-peg incident covering day 1: confirmed, naming the dependency
    const dep = {
      stablecoinId: "usdc-circle",
      direction: "below" as const,
      startedAt: T0 + 86400 - 20 * H,
      endedAt: T0 + 2 * 86400,
    };
    const rows = detectDepegs(coin, slots, T0 + 3 * 86400, { dependencyIncidents: [dep] }).rows;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      startedAt: T0 + 86400,
      peakDeviationBps: -404,
      endedAt: T0 + 2 * 86400,
      closeReason: "recovered-primary",
      confirmationSources: "defillama+dependency:usdc-circle",
      provenance: { confirmationPolicy: "dependency", confidenceTier: "low" },
    });
    // an above-peg dependency incident, or one that ended before the point's day, confirms nothing
    expect(
      detectDepegs(coin, slots, T0 + 3 * 86400, { dependencyIncidents: [{ ...dep, direction: "above" }] }).rows,
    ).toHaveLength(0);
    expect(
      detectDepegs(coin, slots, T0 + 3 * 86400, {
        dependencyIncidents: [{ ...dep, startedAt: T0 - 5 * 86400, endedAt: T0 - 86400 }],
      }).rows,
    ).toHaveLength(0);
  });

  it("a direction flip supersedes the open event; missing reference judges nothing", () => {
    const { rows } = detectDepegs(
      coin,
      [slot(T0, [q("coingecko", 0.97)]), slot(T0 + 900, [q("coingecko", 1.03)])],
      T0 + H,
    );
    expect(rows.map((r) => [r.direction, r.closeReason])).toEqual([
      ["below", "superseded-direction"],
      ["above", null],
    ]);
    expect(rows[0].recoveryPrice).toBeNull();
    const eur = { ...coin, pegType: "peggedEUR" };
    expect(
      detectDepegs(
        eur,
        [slot(T0, [q("coingecko", 0.5)], { pegReference: null, referenceSource: "fx-fallback" })],
        T0 + H,
      ).rows,
    ).toHaveLength(0);
  });

  it("links rows of one direction re-opened within 6 h into one incident", () => {
    const slots = [
      slot(T0, [q("c", 0.97)]),
      slot(T0 + H, [q("c", 1)]),
      // two families: a print its neighbours contradict is evidence only when confirmed
      slot(T0 + 3 * H, [q("c", 0.95), q("d", 0.95)]),
      slot(T0 + 4 * H, [q("c", 1)]),
      slot(T0 + 20 * H, [q("c", 0.98)]),
      slot(T0 + 21 * H, [q("c", 1)]),
    ];
    const { rows } = detectDepegs(coin, slots, T0 + 30 * H);
    expect(rows).toHaveLength(3);
    const incidents = linkIncidents(rows);
    expect(incidents).toHaveLength(2);
    expect(incidents[0]).toMatchObject({
      startedAt: T0,
      startPrice: 0.97,
      endedAt: T0 + 4 * H,
      peakDeviationBps: -500,
      constituentEventCount: 2,
      id: rows[0].id,
    });
    expect(incidents[1].constituentEventCount).toBe(1);
  });
});

describe("observation quality", () => {
  const obs = (source: string, ts: number, price: number) => ({
    source,
    category: "off-chain" as const,
    kind: "backfill" as const,
    ts,
    intervalSec: 86400,
    price,
    low: price,
    high: price,
    mode: "upstream" as const,
    reference: 1,
    referenceSource: "par",
  });
  it("rejects non-positive prices, prices above 1.19x the reference and uncorroborated one-point spikes", () => {
    const input = [
      obs("a", T0, 1),
      obs("a", T0 + 86400, 0.5),
      obs("a", T0 + 2 * 86400, 1),
      obs("a", T0 + 3 * 86400, 0),
      obs("a", T0 + 4 * 86400, 1.5),
      obs("a", T0 + 5 * 86400, 1),
    ];
    const { kept, rejected } = filterObservations(input, "USD");
    expect(rejected.map((r) => [r.obs.ts - T0, r.reason]).sort()).toEqual(
      [
        [3 * 86400, "price-non-positive-or-nan"],
        [4 * 86400, "above-price-bound"],
        [86400, "single-source-spike"],
      ].sort(),
    );
    expect(kept).toHaveLength(3);
    // a second source at the same time corroborates the move: kept
    const corroborated = filterObservations([...input.slice(0, 3), obs("b", T0 + 86400, 0.51)], "USD");
    expect(corroborated.rejected).toHaveLength(0);
  });
});

describe("stuck quotes, coverage gaps, bar peaks, independent families", () => {
  const D = 86400;
  const obs = (
    source: string,
    ts: number,
    price: number,
    extra: { low?: number; high?: number; intervalSec?: number } = {},
  ) => ({
    source,
    category: (source === "binance" ? "CEX" : "off-chain") as "CEX" | "off-chain",
    kind: "backfill" as const,
    ts,
    intervalSec: extra.intervalSec ?? D,
    price,
    low: extra.low ?? price,
    high: extra.high ?? price,
    mode: "upstream" as const,
    reference: 1,
    referenceSource: "par",
  });

  it("a build as of a time between slot boundaries dates no slot and no depeg start after its as-of (a live build)", () => {
    // as-of 7 min into a 15-minute slot; two families quote every 5 min, at peg, then 0.967 in the slot in progress
    const asOf = T0 + D + 7 * 60;
    const input = [];
    for (let ts = T0; ts < asOf - 300; ts += 300)
      input.push(obs("coingecko", ts, 1, { intervalSec: 300 }), obs("defillama", ts, 1.0002, { intervalSec: 300 }));
    input.push(
      obs("coingecko", asOf - 60, 0.967, { intervalSec: 300 }),
      obs("defillama", asOf - 60, 0.9625, { intervalSec: 300 }),
    );
    const slots = buildSlots(filterObservations(input, "USD").kept, "USD", [], null, asOf);
    expect(slots.at(-1)?.ts).toBe(asOf);
    expect(slots.at(-2)?.ts).toBe(T0 + D); // a finished slot keeps its end
    expect(Math.max(...slots.map((sl) => sl.ts))).toBeLessThanOrEqual(asOf);
    const { rows } = detectDepegs(coin, slots, asOf);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ startedAt: asOf, endedAt: null });
    // without the as-of, the slot in progress is stamped with its end, 8 min after the as-of
    expect(buildSlots(filterObservations(input, "USD").kept, "USD", [], null).at(-1)?.ts).toBe(T0 + D + 900);
  });

  it("refuses a quote repeated unchanged for ≥ 24 h beyond the threshold (the whole run), keeps repeats at peg", () => {
    const input = [
      obs("a", T0, 1),
      obs("a", T0 + D, 0.1455),
      obs("a", T0 + 2 * D, 0.1455),
      obs("a", T0 + 3 * D, 0.1455),
      obs("a", T0 + 4 * D, 1),
      obs("a", T0 + 5 * D, 1),
    ];
    const { kept, rejected } = filterObservations(input, "USD");
    expect(rejected.map((r) => [r.obs.ts - T0, r.reason])).toEqual([
      [D, "stuck-quote"],
      [2 * D, "stuck-quote"],
      [3 * D, "stuck-quote"],
    ]);
    expect(kept.map((o) => o.price)).toEqual([1, 1, 1]);
    // the same prices from a coin that is not judged against par (NAV token) are kept
    expect(filterObservations(input, "USD", "peggedUSD", false).rejected).toHaveLength(0);
    // nothing stuck leaves nothing for detection: the stale price opens no incident
    const slots = buildSlots(kept, "USD", [], null);
    expect(detectDepegs(coin, slots, T0 + 10 * D).rows).toHaveLength(0);
  });

  it("a repeat that moves to a new level and stays there is a move, not a stuck quote (UST 2022-05-09/10)", () => {
    // the recorded DefiLlama archive: 0.9947, 0.754, 0.754, 0.86, 0.767 at consecutive 00:00 UTC points
    const ust = [
      obs("a", T0, 0.9947),
      obs("a", T0 + D, 0.754),
      obs("a", T0 + 2 * D, 0.754),
      obs("a", T0 + 3 * D, 0.86),
      obs("a", T0 + 4 * D, 0.767),
    ];
    expect(filterObservations(ust, "USD").rejected).toHaveLength(0);
    // at as-of right after the repeat, nothing shows the market moved: an observation, kept
    expect(filterObservations(ust.slice(0, 3), "USD").rejected).toHaveLength(0);
    // … unless another family quoted elsewhere meanwhile (at peg on the second day): stuck
    const contradicted = filterObservations([...ust.slice(0, 3), obs("binance", T0 + 2 * D - 3600, 0.99)], "USD");
    expect(contradicted.rejected.map((r) => [r.obs.ts - T0, r.reason])).toEqual([
      [D, "stuck-quote"],
      [2 * D, "stuck-quote"],
    ]);
    // a repeat followed by a return to peg is stuck, and so is a repeat longer than two periods whatever follows
    expect(filterObservations([...ust.slice(0, 3), obs("a", T0 + 3 * D, 1)], "USD").rejected).toHaveLength(2);
    const long = [
      obs("a", T0, 1),
      obs("a", T0 + D, 0.754),
      obs("a", T0 + 2 * D, 0.754),
      obs("a", T0 + 3 * D, 0.754),
      obs("a", T0 + 4 * D, 0.754),
      obs("a", T0 + 5 * D, 0.7),
    ];
    expect(filterObservations(long, "USD").rejected).toHaveLength(4);
    // detection then opens at the first 0.754 (two daily points 24 h apart)
    const rows = detectDepegs(coin, buildSlots(filterObservations(ust, "USD").kept, "USD", [], null), T0 + 4 * D).rows;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ startedAt: T0 + D, startPrice: 0.754, endedAt: null });
  });

  it("refuses a glitch episode as a run: prints beyond the band adjoining a print past the bound (USDT 2018-07)", () => {
    // CoinGecko's USDT of 2018-07-11 … 07-25 (rounded): 1.0088, 1.0907, 1.0105, 1.0621, 1.1351, 1.1350, 1.1830, 1.1398, 1.0691,
    // 1.1289, 1.0929, 1.2202, 1.2574, 1.3231, 0.9966 — the last three highs are past the 1.19 bound
    const prices = [
      1.0088, 1.0907, 1.0105, 1.0621, 1.1351, 1.135, 1.183, 1.1398, 1.0691, 1.1289, 1.0929, 1.2202, 1.2574, 1.3231,
      0.9966,
    ];
    const input = prices.map((p, i) => obs("coingecko", T0 + i * D, p));
    const { kept, rejected } = filterObservations(input, "USD");
    const reasons = Object.fromEntries(rejected.map((r) => [Math.round((r.obs.ts - T0) / D), r.reason]));
    // days 1..10 (1.0907 … 1.0929, all ≥ +100 bps) are one run with days 11..13 past the bound
    expect(reasons).toEqual({
      1: "glitch-run",
      2: "glitch-run",
      3: "glitch-run",
      4: "glitch-run",
      5: "glitch-run",
      6: "glitch-run",
      7: "glitch-run",
      8: "glitch-run",
      9: "glitch-run",
      10: "glitch-run",
      11: "above-price-bound",
      12: "above-price-bound",
      13: "above-price-bound",
    });
    expect(kept.map((o) => o.price)).toEqual([1.0088, 0.9966]);
    // the same run without a print past the bound is a move, kept
    expect(filterObservations(input.slice(0, 11), "USD").rejected).toHaveLength(0);
  });

  it("claims no duration across a gap it did not observe: the event ends at its last observed slot", () => {
    const day = (d: number, p: number) => slot(T0 + d * D, [q("defillama", p)], { cadenceSec: D });
    const { rows } = detectDepegs(coin, [day(0, 0.5), day(1, 0.5), day(800, 1)], T0 + 900 * D);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      startedAt: T0,
      endedAt: T0 + 2 * D,
      closeReason: "orphan-tracking-removed",
      recoveryPrice: null,
    });
    // an event seen in one slot only still ends after it starts
    const one = detectDepegs(coin, [day(0, 1), day(1, 0.3), day(900, 1)], T0 + 901 * D).rows;
    expect(one[0]).toMatchObject({ startedAt: T0 + D, endedAt: T0 + 2 * D, closeReason: "orphan-tracking-removed" });
  });

  it("takes the peak from a guarded bar low and names the bar; a wick far from its close is ignored", () => {
    const bars = [
      obs("binance", T0 + 60, 0.9121, { low: 0.882, high: 1, intervalSec: 60 }),
      obs("binance", T0 + 120, 0.9136, { low: 0.5, high: 0.917, intervalSec: 60 }), // 4000+ bps below its close: a one-print wick
      obs("coingecko", T0 + 900, 0.906, { low: 0.8994, high: 0.93, intervalSec: 900 }),
      obs("binance", T0 + 1800, 1, { low: 0.999, high: 1.001, intervalSec: 60 }),
      obs("coingecko", T0 + 1800, 1, { low: 0.999, high: 1.001, intervalSec: 900 }),
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

  it("a copy contradicted by its original opens nothing; a copy alone stands in for its family, never as a second one", () => {
    const contradicted = (d: number, p: number) =>
      slot(T0 + d * D, [q("alchemy", p), q("coingecko", 1)], { cadenceSec: D });
    expect(
      detectDepegs(
        coin,
        [contradicted(0, 1), contradicted(1, 0.96), contradicted(2, 0.95), contradicted(3, 0.96), contradicted(4, 1)],
        T0 + 10 * D,
      ).rows,
    ).toHaveLength(0);
    // no original quote in the slots (the original series is not recorded for the coin): the copy is its family's evidence
    const alone = (d: number, p: number) => slot(T0 + d * D, [q("alchemy", p)], { cadenceSec: D });
    const rows = detectDepegs(coin, [alone(0, 1), alone(1, 0.96), alone(2, 0.95), alone(3, 1)], T0 + 10 * D).rows;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      startedAt: T0 + D,
      families: ["coingecko"],
      provenance: { confirmationPolicy: "two-point-daily", confidenceTier: "low" },
    });
  });

  it("a large-cap move seen only by a series and its copy stays pending; a second family confirms it", () => {
    const big = { supplyUsd: 5e9 };
    const copied = [
      slot(T0, [q("coingecko", 0.967), q("alchemy", 0.967)], big),
      slot(T0 + 900, [q("coingecko", 0.966), q("alchemy", 0.966)], big),
    ];
    expect(detectDepegs(coin, copied, T0 + 1800).rows).toHaveLength(0);
    const independent = [slot(T0, [q("coingecko", 0.967), q("alchemy", 0.967), q("defillama", 0.9625)], big)];
    const { rows } = detectDepegs(coin, independent, T0 + 1800);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      confirmationSources: "coingecko+defillama",
      families: ["coingecko", "defillama"],
      provenance: { confidenceTier: "high" },
    });
  });
});

describe("lone prints and steady levels (issue 29 items 4, 5; recorded DefiLlama archive)", () => {
  const D = 86400;
  /** 00:00 UTC of an ISO day, Unix s. */
  const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 1000;
  /** Daily 00:00 UTC points of the DefiLlama price archive (family `coingecko`), or of another source. */
  const daily = (from: string, prices: number[], source = "defillama-prices") =>
    prices.map((price, i) => ({
      source,
      category: (source === "binance" ? "CEX" : "off-chain") as "CEX" | "off-chain",
      kind: "backfill" as const,
      ts: day(from) + i * D,
      intervalSec: D,
      price,
      low: price,
      high: price,
      mode: "upstream" as const,
      reference: 1,
      referenceSource: "par",
    }));
  const detect = (obs: ReturnType<typeof daily>, asOf: number, ctx = {}) => {
    const { kept, rejected } = filterObservations(obs, "USD");
    expect(rejected).toEqual([]);
    const det = detectDepegs(coin, buildSlots(kept, "USD", [], null), asOf, ctx);
    return { ...det, incidents: linkIncidents(det.rows) };
  };
  // stablecoin_prices.csv column `usdp` (USDP, Unit Protocol), rows labelled 2021-11-03 … 11-23 = 00:00 UTC of 11-04 … 11-24
  const usdpUnit = [
    1.0051785340067045, 1.0123519814489044, 1.0113767872001325, 1.0112535712774051, 1.015608212804755,
    1.029282285972277, 1.0132859061387596, 1.0156153193806796, 1.1711479519117614, 1.0149695569693922,
    1.0199691499254535, 1.019929915592434, 1.0205436428282864, 1.0233638821597513, 1.0217991017028267,
    1.0155940624176047, 1.0163914980717943, 1.0194229846829543, 1.018295056124456, 0.9989205863641037,
    1.0115681220498667,
  ];
  // column `musd`, 00:00 UTC of 2021-08-25 … 08-29
  const musd = [1.0003409213409764, 1.001316516074413, 0.8618693256377913, 0.9809308618517173, 1.001573369319107];

  it("a lone print its neighbours contradict neither opens nor peaks; it is flagged (USDP (Unit) 2021-11-12 +1711 in a +293 run)", () => {
    const { incidents, flagged } = detect(daily("2021-11-04", usdpUnit), day("2021-11-25"));
    // 11-05 … 11-22 stay ≥ +113 bps; 11-23 is 0.99892 (inside): one incident, its peak the run's own
    // high 1.02928 (11-09): round(0.0292822 × 10000) = +293, not the 1.17115 print (+1711)
    expect(incidents).toHaveLength(1);
    expect(incidents[0]).toMatchObject({
      direction: "above",
      startedAt: day("2021-11-05"),
      endedAt: day("2021-11-23"),
      peakDeviationBps: 293,
    });
    expect(incidents[0].trace.peak.ts).toBe(day("2021-11-09"));
    // the print stays visible: +1711 between 1.01561 (+156) and 1.01497 (+150), both < 1711 / 2 and ≥ 300 bps smaller
    expect(flagged.map((f) => [f.print.ts, f.print.bps, f.previousBps, f.nextBps])).toEqual([
      [day("2021-11-12"), 1711, 156, 150],
    ]);
  });

  it("a lone print opens nothing unless another family or a dependency confirms it at its time (MUSD 2021-08-27 −1381)", () => {
    const asOf = day("2021-08-31");
    // 0.86187 (−1381) between 1.00132 (+13) and 0.98093 (−191): one later point −191 alone waits and expires
    const alone = detect(daily("2021-08-25", musd), asOf);
    expect(alone.incidents).toEqual([]);
    expect(alone.flagged.map((f) => [f.print.ts, f.print.bps, f.previousBps, f.nextBps])).toEqual([
      [day("2021-08-27"), -1381, 13, -191],
    ]);
    // a second family (a CEX) printing 0.862 in the same slot confirms it: the incident opens with that peak
    const cex = detect([...daily("2021-08-25", musd), ...daily("2021-08-27", [0.862], "binance")], asOf);
    expect(cex.flagged).toEqual([]);
    expect(cex.incidents).toHaveLength(1);
    expect(cex.incidents[0]).toMatchObject({ startedAt: day("2021-08-27"), peakDeviationBps: -1381 });
    // so does a confirmed incident of a curated dependency overlapping the print (DAI, FRAX on 2023-03-12 via USDC)
    const dep = detect(daily("2021-08-25", musd), asOf, {
      dependencyIncidents: [
        { stablecoinId: "usdc-circle", direction: "below", startedAt: day("2021-08-26") + 3 * H, endedAt: null },
      ],
    });
    expect(dep.flagged).toEqual([]);
    expect(dep.incidents[0]).toMatchObject({
      peakDeviationBps: -1381,
      confirmationSources: "coingecko+dependency:usdc-circle",
    });
  });

  it("the newest print is never lone: as of its own day it waits for its next neighbour", () => {
    const early = detect(daily("2021-08-25", musd.slice(0, 3)), day("2021-08-27"));
    expect(early.flagged).toEqual([]);
    expect(early.pending).toMatchObject({ firstSeenAt: day("2021-08-27"), peakSeenBps: -1381 });
  });

  // column `just-stablecoin` (USDJ), 00:00 UTC of 2023-01-25 … 03-01: 1.11, then 1.13 × 15, then 1.10 × 20
  const usdj = [1.11, ...Array(15).fill(1.13), ...Array(20).fill(1.1)];
  it("a steady two-decimal premium is an observation, not a stuck quote: USDJ as of 2023-03-01 is one open above-peg incident", () => {
    const asOf = day("2023-03-01") + 1;
    const { incidents, pending } = detect(daily("2023-01-25", usdj), asOf);
    // 1.13 → 1.10 is −265 bps (< 300): the level held; 1.10 is the newest run, nothing after it moved
    expect(pending).toBeNull();
    expect(incidents).toHaveLength(1);
    expect(incidents[0]).toMatchObject({
      direction: "above",
      startedAt: day("2023-01-25"),
      endedAt: null,
      peakDeviationBps: 1300,
    });
    // the current price is the newest 1.10
    expect(currentConsensus(daily("2023-01-25", usdj), "USD", asOf).consensus.price).toBe(1.1);
  });

  it("a repeat is stuck when the market around it moved: its own next quote left the level (USDN 0.30143 × 45, then 0.0853)", () => {
    // column `neutrino`, 00:00 UTC of 2023-01-24 … 03-13
    const usdn = [0.3293, 0.32677401, ...Array(45).fill(0.30143382), 0.085287, 0.09322];
    const { rejected } = filterObservations(daily("2023-01-24", usdn), "USD");
    expect(rejected).toHaveLength(45);
    expect(new Set(rejected.map((r) => r.reason))).toEqual(new Set(["stuck-quote"]));
    expect(rejected.map((r) => r.obs.ts)).toEqual(Array.from({ length: 45 }, (_, i) => day("2023-01-26") + i * D));
    // before the 0.0853 print (as of 2023-03-12) nothing shows the market moved: the run is kept
    expect(filterObservations(daily("2023-01-24", usdn.slice(0, 47)), "USD").rejected).toEqual([]);
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
    const s = pegScore(
      [{ startedAt: now - 100 * DAY, endedAt: now - 90 * DAY, peakDeviationBps: -500, constituentEventCount: 1 }],
      now - 365 * DAY,
      now,
    );
    expect(s.pegPct).toBeCloseTo(97.26, 2);
    expect(s.severityScore).toBeCloseTo(98.69, 2);
    expect(s.pegScore).toBe(98);
    expect(s.activeDepeg).toBe(false);
  });
  it("counts only observed time as time at peg", () => {
    // 10 days in depeg; the window spans 365 days but prices exist on only 100 of them → 90% at peg, not 97.26%.
    const inc = [
      { startedAt: now - 100 * DAY, endedAt: now - 90 * DAY, peakDeviationBps: -500, constituentEventCount: 1 },
    ];
    expect(pegScore(inc, now - 365 * DAY, now, 100 * DAY).pegPct).toBeCloseTo(90, 6);
  });
  it("reports an incident opened by the as-of observation as active, even on the first day of tracking", () => {
    const s = pegScore(
      [{ startedAt: now, endedAt: null, peakDeviationBps: -1819, constituentEventCount: 1 }],
      now,
      now,
    );
    expect(s.activeDepeg).toBe(true);
    expect(s.eventCount).toBe(1);
  });
  it("recent 90 days: time at peg over observed days only, with their share; one observed day is coverage-limited", () => {
    // tracked for 4 years, priced on 1 of the last 90 days, no incident
    const one = pegScore([], now - 1461 * DAY, now, 1000 * DAY, 1).recent90d;
    expect(one).toEqual({
      pegPct: 100,
      incidentCount: 0,
      thresholdCrossingCount: 0,
      coverageLimited: true,
      observedDays: 1,
      coveragePct: 1.11,
    });
    // 81 of 90 days observed (90%) is enough; 2 days in depeg over 81 observed days → (1 − 2/81)·100 = 97.53
    const inc = [
      { startedAt: now - 10 * DAY, endedAt: now - 8 * DAY, peakDeviationBps: -300, constituentEventCount: 1 },
    ];
    const full = pegScore(inc, now - 1461 * DAY, now, 1400 * DAY, 81).recent90d;
    expect(full).toMatchObject({ pegPct: 97.53, coverageLimited: false, observedDays: 81, coveragePct: 90 });
    expect(pegScore([], now - 1461 * DAY, now, 1400 * DAY, 0).recent90d.pegPct).toBeNull();
  });
  it("penalises an open incident and reports it active", () => {
    const s = pegScore(
      [{ startedAt: now - DAY, endedAt: null, peakDeviationBps: -2000, constituentEventCount: 1 }],
      now - 365 * DAY,
      now,
    );
    expect(s.activeDepeg).toBe(true);
    expect(s.activePenalty).toBe(40); // min(50, max(5, 2000/50))
    // pegPct = (1 − 1/365)·100 = 99.726; severity = 100 − max(20·(1/30)·r, 1·r) with r = 1/(1 + 1/365.25) = 0.99727
    // → 99.003; score = round(0.5·99.726 + 0.5·99.003 − 40) = round(59.36) = 59.
    expect(s.pegScore).toBe(59);
  });
});

describe("current price at as-of", () => {
  const AS_OF = T0 + 30 * 86400;
  const o = (
    source: string,
    ts: number,
    price: number,
    intervalSec: number,
    kind: "live" | "backfill" = "backfill",
  ) => ({
    source,
    category: "off-chain" as const,
    kind,
    ts,
    intervalSec,
    price,
    low: price,
    high: price,
    mode: "upstream" as const,
    reference: 1,
    referenceSource: "par",
  });
  it("takes each source's newest observation at or before as-of within its cadence's window, with its real observation time", () => {
    // daily archives stamped 00:00 UTC: a point 47 h old is current, one 49 h old is not; a point after as-of never counts
    const cur = currentConsensus(
      [
        o("defillama-prices", AS_OF - 86400, 0.9985, 86400),
        o("coingecko", AS_OF - 47 * 3600, 0.9987, 86400),
        o("alchemy", AS_OF - 49 * 3600, 0.97, 86400),
        o("coingecko", AS_OF + 60, 0.5, 86400),
      ],
      "USD",
      AS_OF,
    );
    expect(cur.consensus).toMatchObject({
      price: 0.9986,
      consensusSources: ["coingecko", "defillama-prices"],
      observedAt: AS_OF - 47 * 3600,
    });
    expect(cur.unavailableReason).toBeNull();
    // a live point quote or an intraday bar is current for 24 h only
    expect(
      currentConsensus([o("defillama", AS_OF - 25 * 3600, 1, 0, "live")], "USD", AS_OF).consensus.price,
    ).toBeNull();
    expect(currentConsensus([o("binance", AS_OF - 23 * 3600, 1.001, 60)], "USD", AS_OF).consensus.price).toBe(1.001);
  });
  it("is null with a reason beyond every window: never a stale value presented as current", () => {
    const stale = currentConsensus([o("defillama-prices", AS_OF - 10 * 86400, 1, 86400)], "USD", AS_OF);
    expect(stale).toMatchObject({
      consensus: { price: null, priceSource: "missing" },
      unavailableReason: "stale-beyond-window",
    });
    expect(currentConsensus([], "USD", AS_OF).unavailableReason).toBe("no-observation");
  });
});

describe("current price confidence (spec 2.2: `low` only when sources diverge)", () => {
  const AS_OF = T0 + 30 * 86400;
  /** A live quote one hour before as-of; `reference` null with `fx-fallback` = a non-USD peg whose ECB rate is stale. */
  const live = (source: string, price: number, reference: number | null, referenceSource: string) => ({
    source,
    category: "off-chain" as const,
    kind: "live" as const,
    ts: AS_OF - 3600,
    intervalSec: 0,
    price,
    low: price,
    high: price,
    mode: "upstream" as const,
    reference,
    referenceSource,
  });

  it("a non-USD coin priced by one source without a usable reference is `single-source`, not judged (`no-reference`)", () => {
    const cur = currentConsensus([live("defillama", 0.7776, null, "fx-fallback")], "SGD", AS_OF);
    expect(cur.consensus).toMatchObject({
      price: 0.7776,
      priceSource: "defillama",
      priceConfidence: "single-source",
      consensusSources: ["defillama"],
    });
    expect(cur).toMatchObject({ reference: null, referenceSource: "fx-fallback", unjudgedReason: "no-reference" });
  });

  it("is `low` only when its sources diverge, reference or not; `high` when two families agree", () => {
    const diverge = currentConsensus(
      [live("defillama", 0.7, null, "fx-fallback"), live("coingecko", 0.78, null, "fx-fallback")],
      "SGD",
      AS_OF,
    );
    expect(diverge.consensus.priceConfidence).toBe("low");
    expect(diverge.unjudgedReason).toBe("no-reference");
    const agree = currentConsensus(
      [live("defillama", 0.7776, null, "fx-fallback"), live("coingecko", 0.7778, null, "fx-fallback")],
      "SGD",
      AS_OF,
    );
    expect(agree.consensus.priceConfidence).toBe("high");
    const judged = currentConsensus([live("defillama", 0.7776, 0.7777, "fx")], "SGD", AS_OF);
    expect(judged).toMatchObject({
      reference: 0.7777,
      unjudgedReason: null,
      consensus: { priceConfidence: "single-source" },
    });
  });

  it("NAV tokens and floating pegs are not judged, whatever their reference", () => {
    expect(currentConsensus([live("defillama", 1.08, 1, "par")], "USD", AS_OF, { navToken: true }).unjudgedReason).toBe(
      "nav-token",
    );
    expect(
      currentConsensus([live("defillama", 4.7, null, "floating")], "VAR", AS_OF, { floatingPeg: true }).unjudgedReason,
    ).toBe("floating-peg");
  });

  it("the published price_current row keeps the consensus label and records the missing reference separately", () => {
    const obsRow = (id: string, pegType: string, price: number, reference: number | null, referenceSource: string) => ({
      stablecoin_id: id,
      peg_type: pegType,
      source: "defillama",
      category: "off-chain",
      kind: "live",
      ts: AS_OF - 3600,
      interval_sec: 0,
      price_usd: price,
      low_usd: price,
      high_usd: price,
      observed_at_mode: "upstream",
      reference_usd: reference,
      reference_source: referenceSource,
    });
    const coin = (id: string, pegType: string, pegCurrency: string) => ({
      id,
      symbol: id.toUpperCase(),
      peg_type: pegType,
      peg_currency: pegCurrency,
      nav_token: false,
      floating_peg: false,
    });
    const out = pegMonitor.run(
      {
        obs: [
          obsRow("usdx-issuer", "peggedUSD", 1.0001, 1, "par"),
          obsRow("xsgd-straitsx", "peggedSGD", 0.7776, null, "fx-fallback"),
        ],
        coins: [coin("usdx-issuer", "peggedUSD", "USD"), coin("xsgd-straitsx", "peggedSGD", "SGD")],
        supplyHistory: [],
        supplyCurrent: [],
        verdicts: [],
      },
      { asOf: AS_OF },
    );
    const rows = Object.fromEntries(out.tables.price_current.map((r) => [r.stablecoin_id, r]));
    expect(rows["xsgd-straitsx"]).toMatchObject({
      price_confidence: "single-source",
      unjudged_reason: "no-reference",
      deviation_bps: null,
      reference_source: "fx-fallback",
    });
    expect(rows["usdx-issuer"]).toMatchObject({
      price_confidence: "single-source",
      unjudged_reason: null,
      deviation_bps: 1,
      reference_source: "par",
    });
    // not judged: no depeg rows for the coin without a reference
    expect(out.tables.depeg_event_rows.filter((r) => r.stablecoin_id === "xsgd-straitsx")).toHaveLength(0);
  });
});
