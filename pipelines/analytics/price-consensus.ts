/**
 * Price consensus (methodology `ballast-price-consensus-v3`; v3: the current price is the consensus at
 * as-of of each source's newest accepted observation within its staleness window, peg-monitor.ts
 * `currentConsensus`, and DefiLlama's price archive is family coingecko; v2: independence is by declared
 * source family, see pipelines/sources/lineage.ts): one price per coin and time from every
 * usable quote, with a confidence label. Pure functions; the build runs them per 15-minute slot.
 *
 * Rules:
 * - Two quotes agree when their midpoint divergence |a−b| / ((a+b)/2) is ≤ 50 bps. Agreement must be
 *   pairwise, so on sorted prices the candidate clusters are the windows whose ends agree.
 * - Best cluster: more members, then more total weight, then a hard (CEX) member, then tighter
 *   spread, then median closer to the peg reference, then the alphabetically smaller label.
 * - ≥ 2 members: price = cluster median, label = members sorted and joined by `+`; confidence
 *   `high` only when the members span ≥ 2 independent source families (Alchemy's series is a copy
 *   of CoinGecko's, so `alchemy+coingecko` is one family and stays `single-source`).
 * - 1 quote: that quote, `single-source`. Several quotes and no agreeing pair: `low`, the quote of the
 *   strongest tier, then closest to the reference, then highest weight, then alphabetical. `low`
 *   means only that sources diverge (spec 2.2); whether a price can be judged against its peg
 *   reference is a separate matter (peg-monitor.ts `unjudgedReason`).
 * - No quote: price null, source `missing`, confidence null.
 */

/** Evidence category of a quote, as named in `confirmationSources`. */
export type QuoteCategory = "off-chain" | "CEX" | "DEX" | "Pool";

/** One usable USD quote of a coin. `observedAt` Unix s. */
export interface Quote {
  source: string;
  category: QuoteCategory;
  /** Independent upstream family the quote derives from (`sourceFamily(source)`). */
  family: string;
  /** True when the source is a declared copy of another upstream's series (never sole evidence). */
  copied?: boolean;
  price: number;
  observedAt: number;
  observedAtMode: "upstream" | "local_fetch" | "unknown";
}

export type PriceConfidence = "high" | "single-source" | "low" | "fallback";

/** Consensus of a set of quotes (spec 2.2 price fields). */
export interface Consensus {
  price: number | null;
  priceSource: string;
  priceConfidence: PriceConfidence | null;
  /** Sources that returned a valid quote, sorted. */
  consensusSources: string[];
  /** Sources in the selected cluster (or the selected single source), sorted. */
  agreeSources: string[];
  /** Oldest observation among the agreeing sources (conservative), Unix s. */
  observedAt: number | null;
  observedAtMode: "upstream" | "local_fetch" | "unknown" | null;
}

export const AGREEMENT_BPS = 50;

/** Consensus weight per source; unknown sources weigh 1. */
export const SOURCE_WEIGHTS: Record<string, number> = { coingecko: 2, binance: 2, defillama: 1, alchemy: 1 };

const weight = (q: Quote) => SOURCE_WEIGHTS[q.source] ?? 1;
/** Trust tier (lower is stronger): CEX/DEX markets 1, aggregators 3. */
const tier = (q: Quote) => (q.category === "CEX" ? 1 : q.category === "DEX" || q.category === "Pool" ? 4 : 3);

/** Midpoint divergence in bps; +∞ when the midpoint is not positive. */
export function divergenceBps(a: number, b: number): number {
  const mid = (a + b) / 2;
  return mid > 0 && Number.isFinite(mid) ? (Math.abs(a - b) / mid) * 10000 : Number.POSITIVE_INFINITY;
}

/** Median of a non-empty list (mean of the two middle values for an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Collapses repeated quotes of one source: median price, oldest time, mode kept only if all equal. */
function collapse(quotes: Quote[]): Quote[] {
  const by = new Map<string, Quote[]>();
  for (const q of quotes) by.set(q.source, [...(by.get(q.source) ?? []), q]);
  return [...by.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([source, qs]) => ({
      source,
      category: qs[0].category,
      family: qs[0].family,
      copied: qs[0].copied,
      price: median(qs.map((q) => q.price)),
      observedAt: Math.min(...qs.map((q) => q.observedAt)),
      observedAtMode: qs.every((q) => q.observedAtMode === qs[0].observedAtMode) ? qs[0].observedAtMode : "unknown",
    }));
}

function modeOf(qs: Quote[]): Consensus["observedAtMode"] {
  return qs.every((q) => q.observedAtMode === qs[0].observedAtMode) ? qs[0].observedAtMode : "unknown";
}

/**
 * Consensus of `quotes` (any order) against `pegReference` (USD per peg unit, null when unknown).
 * Non-finite or non-positive quotes are ignored.
 */
export function computeConsensus(quotes: Quote[], pegReference: number | null): Consensus {
  const qs = collapse(quotes.filter((q) => Number.isFinite(q.price) && q.price > 0)).sort(
    (a, b) => a.price - b.price || a.source.localeCompare(b.source),
  );
  const consensusSources = qs.map((q) => q.source).sort();
  if (qs.length === 0)
    return {
      price: null,
      priceSource: "missing",
      priceConfidence: null,
      consensusSources,
      agreeSources: [],
      observedAt: null,
      observedAtMode: null,
    };
  const ref = pegReference ?? median(qs.map((q) => q.price));
  if (qs.length === 1) {
    return {
      price: qs[0].price,
      priceSource: qs[0].source,
      priceConfidence: "single-source",
      consensusSources,
      agreeSources: [qs[0].source],
      observedAt: qs[0].observedAt,
      observedAtMode: qs[0].observedAtMode,
    };
  }
  type Cand = { members: Quote[]; weight: number; hard: number; spread: number; dist: number; label: string };
  let best: Cand | null = null;
  for (let i = 0; i < qs.length; i++) {
    for (let j = i + 1; j < qs.length; j++) {
      if (divergenceBps(qs[i].price, qs[j].price) > AGREEMENT_BPS) break;
      const members = qs.slice(i, j + 1);
      const c: Cand = {
        members,
        weight: members.reduce((s, q) => s + weight(q), 0),
        hard: members.some((q) => tier(q) === 1) ? 1 : 0,
        spread: divergenceBps(members[0].price, members[members.length - 1].price),
        dist: Math.abs(median(members.map((q) => q.price)) - ref),
        label: members
          .map((q) => q.source)
          .sort()
          .join("+"),
      };
      if (!best || better(c, best)) best = c;
    }
  }
  if (best) {
    const oneFamily = new Set(best.members.map((q) => q.family)).size < 2;
    return {
      price: median(best.members.map((q) => q.price)),
      priceSource: best.label,
      priceConfidence: oneFamily ? "single-source" : "high",
      consensusSources,
      agreeSources: best.members.map((q) => q.source).sort(),
      observedAt: Math.min(...best.members.map((q) => q.observedAt)),
      observedAtMode: modeOf(best.members),
    };
  }
  const pick = [...qs].sort(
    (a, b) =>
      tier(a) - tier(b) ||
      Math.abs(a.price - ref) - Math.abs(b.price - ref) ||
      weight(b) - weight(a) ||
      a.source.localeCompare(b.source),
  )[0];
  return {
    price: pick.price,
    priceSource: pick.source,
    priceConfidence: "low",
    consensusSources,
    agreeSources: [pick.source],
    observedAt: pick.observedAt,
    observedAtMode: pick.observedAtMode,
  };
}

function better(
  a: { members: Quote[]; weight: number; hard: number; spread: number; dist: number; label: string },
  b: typeof a,
): boolean {
  if (a.members.length !== b.members.length) return a.members.length > b.members.length;
  if (a.weight !== b.weight) return a.weight > b.weight;
  if (a.hard !== b.hard) return a.hard > b.hard;
  if (a.spread !== b.spread) return a.spread < b.spread;
  if (a.dist !== b.dist) return a.dist < b.dist;
  return a.label < b.label;
}
