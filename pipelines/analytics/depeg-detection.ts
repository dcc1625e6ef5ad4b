import { DEPEG_METHODOLOGY_VERSION } from "./depeg-detection.version.ts";
import { createHash } from "node:crypto";
import type { Consensus, Quote } from "./price-consensus.ts";
import { must } from "../../lib/must.ts";

/**
 * Depeg detection (methodology `ballast-depeg-v4`) on a 15-minute grid. Pure functions.
 * Changelog (pipelines/analytics/changelogs/depeg-detection.md): v4 (2026-11-28) — a lone print its
 * neighbours contradict is no evidence unless confirmed; a repeated quote is stuck only when the
 * market around it moved (peg monitor). v3 (2026-11-25) — tracking lost at
 * as-of ends open events, dead coins' tracking ends, a copy stands in for its family only when its
 * original is absent, dependency confirmation. v2 (2026-11) — evidence labels are independent source families (a copied series is
 * not a second source), coverage gaps end incidents, peaks from OHLC bar extremes, NAV tokens and
 * floating pegs are not judged (the caller leaves them out). v1 — first version.
 *
 * - Deviation: `bps = round((price / pegReference − 1) × 10000)` of the slot's consensus price;
 *   `above` when bps ≥ 0. A depeg condition is |bps| ≥ 100 for `peggedUSD`, ≥ 150 for other pegs.
 *   Slots without a usable reference are not judged (no fake depegs from missing FX).
 * - A condition opens an event at once unless it needs confirmation: supply ≥ $1B (`large-cap`;
 *   ≥ $750M when |bps| ≥ 2× threshold), consensus confidence `low`/`fallback` (`low-confidence`),
 *   or |bps| ≥ 5000 (`extreme-move`). Such conditions wait as a pending incident until a second
 *   piece of independent evidence agrees: quotes deviating the same way by ≥ 50% of the threshold
 *   from ≥ 2 evidence labels (each off-chain source FAMILY by name — Alchemy re-exports CoinGecko, so
 *   both are `coingecko` — then `CEX`, `DEX`, `Pool`), where
 *   `low-confidence` needs a market label (CEX/DEX/Pool); for daily backfill history a second daily point ≥ 12 h and ≤ 36 h after
 *   the first also confirms (two-point rule); in daily history a single point of one category always
 *   waits for that (`single-daily-point`), except a crash ≥ 5000 bps. On opening, `startedAt`,
 *   `startPrice` and the peak come from the whole uninterrupted run of the condition (judged slots
 *   beyond the threshold in one direction), even across expired pending incidents. A pending
 *   incident is dropped when the condition clears, the direction flips, or it expires
 *   (36 h for daily history, 8100 s intraday).
 * - A slot where only declared copies of another upstream's series (Alchemy, DefiLlama's price
 *   archive) show the condition while an original quote of the same family sits in the slot neither
 *   opens nor advances a pending incident: a copy contradicted by its original is no evidence. A
 *   copy without its original in the slot stands in for its family (never as a second family).
 * - Dependency confirmation: a condition still unconfirmed after the rules above (not one waiting
 *   for a market label) is confirmed when a curated upstream dependency of the coin has a confirmed
 *   incident in the same direction overlapping the slot's time (`DetectionContext.dependencyIncidents`;
 *   policy `dependency`, `confirmationSources` ending `dependency:<id>`).
 * - Coverage gaps: when the next judged slot comes more than max(3 × the previous slot's cadence,
 *   6 h) after the previous one, nothing is claimed across the gap: an open event ends one cadence
 *   (at least one 15-minute slot) after its last observed slot, the time that observation stands for (`closeReason`
 *   `orphan-tracking-removed`: tracking was lost, no recovery was observed); pending incidents and
 *   runs are dropped.
 * - Lone prints: a judged slot beyond the threshold whose previous and next judged slots (each
 *   within the coverage gap) both contradict it — each under half of its deviation and at least
 *   CONTRADICTION_BPS (300) smaller in its direction — is no evidence unless a second evidence label
 *   shows the condition in the slot or a curated dependency's confirmed incident overlaps it: it
 *   neither opens, advances, peaks, closes nor supersedes anything, still counts as tracked time,
 *   stays in the consensus grid, and is returned in `flagged` (USDP (Unit)'s +1711 of 2021-11-12
 *   between +156 and +150). The last slot before as-of (no next observation) is never lone.
 * - Peaks: the peak is the most extreme of the slot consensus and, in slots already beyond the
 *   threshold the same way, the OHLC bar extremes of the slot (bar low for `below`, high for
 *   `above`) of sources that publish bars. One-print guard: a bar extreme counts only when it lies
 *   within 1000 bps of that bar's own close and the slot consensus already shows the condition,
 *   so a lone wick in a market trading at peg never sets a peak.
 * - An open event keeps its peak (largest |bps|); it closes `recovered-primary` at the first judged
 *   slot back inside the threshold (`recoveryPrice` = that price), `superseded-direction` when the
 *   opposite condition appears (a new event then opens), `coverage-lost-supply` when supply falls
 *   under $1M. At as-of, an event whose last judged slot is older than the coverage gap, or whose
 *   coin's tracking has ended (`DetectionContext.trackingEndsAt`: a dead coin), ends one cadence after
 *   its last observation (`orphan-tracking-removed`); the others have `endedAt` null (open).
 * - Raw rows of one coin and direction whose gap (previous end → next start) is ≤ 6 h are linked
 *   into one incident: `startedAt`/`startPrice` of the first, peak of the worst, end of the last,
 *   `constituentEventCount` = rows linked. The incident id is the first row's id.
 *
 * Version: `DEPEG_METHODOLOGY_VERSION` (./depeg-detection.version.ts).
 */
export const SLOT_SEC = 900;
export const LARGE_CAP_USD = 1_000_000_000;
export const SOFT_LARGE_CAP_USD = 750_000_000;
export const SUPPLY_FLOOR_USD = 1_000_000;
export const EXTREME_MOVE_BPS = 5000;
export const REOPEN_WINDOW_SEC = 6 * 3600;
const DAILY_PENDING_EXPIRY_SEC = 36 * 3600;
const DAILY_SECOND_POINT_MIN_SEC = 12 * 3600;
const INTRADAY_PENDING_EXPIRY_SEC = 8100;
/** Minimum gap (s) between judged slots that ends an event at its last observation. */
export const MIN_COVERAGE_GAP_SEC = 6 * 3600;
/**
 * Contradiction distance (bps): a quote this far from a level contradicts it. A lone print lies at
 * least this much further from the reference than both its neighbours; a stuck run's level is left
 * when a later or other-family quote lies this far from it.
 */
export const CONTRADICTION_BPS = 300;
/** A bar extreme further than this from its bar's close (bps) is a one-print wick, not a peak. */
export const BAR_WICK_GUARD_BPS = 1000;

/** Longest silence (s) after a judged slot that tracking survives: max(3 × its cadence, MIN_COVERAGE_GAP_SEC). */
export function coverageGapSec(slot: Pick<Slot, "cadenceSec">): number {
  return Math.max(3 * slot.cadenceSec, MIN_COVERAGE_GAP_SEC);
}

/** Threshold in bps for a peg type: 100 for `peggedUSD`, 150 otherwise. */
export function thresholdBps(pegType: string): number {
  return pegType === "peggedUSD" ? 100 : 150;
}

/** Deviation in bps of `price` from `reference` (USD per peg unit), rounded. */
export function deviationBps(price: number, reference: number): number {
  return Math.round((price / reference - 1) * 10000);
}

/** One judged point of a coin's grid: its consensus and the quotes behind it. */
export interface Slot {
  /** Slot end, Unix s (multiple of 900). */
  ts: number;
  consensus: Consensus;
  /** Last quote of each source inside the slot. */
  quotes: Quote[];
  /** USD per peg unit of the slot's day; null when no usable reference exists. */
  pegReference: number | null;
  referenceSource: string;
  /** USD supply of the day (history), else the current supply; null when unknown. */
  supplyUsd: number | null;
  supplySource: "history" | "current" | "unknown";
  kind: "live" | "backfill";
  /** Longest observation interval among the quotes (86400 for daily history). */
  cadenceSec: number;
  /**
   * Guarded OHLC extremes of the slot's bars (sources publishing bars only): lowest low and highest
   * high in USD, each with the bar that set it. Null when no bar of the slot qualifies.
   */
  barLow?: BarExtreme | null;
  barHigh?: BarExtreme | null;
}

/** A slot detection can judge: it has a consensus price and a peg reference. */
type JudgedSlot = Slot & { consensus: { price: number }; pegReference: number };

/** Whether `slot` has both a consensus price and a peg reference (slots without either are skipped). */
function isJudged(slot: Slot): slot is JudgedSlot {
  return slot.consensus.price !== null && slot.pegReference !== null;
}

/** One bar extreme: the USD price, the source, its family, and the bar (end ts, interval). */
export interface BarExtreme {
  price: number;
  source: string;
  family: string;
  barEndTs: number;
  intervalSec: number;
}

/** The observations behind one event moment (open, peak, close), for tracing. */
export interface EventTrace {
  ts: number;
  price: number;
  bps: number;
  priceSource: string;
  quotes: { source: string; category: string; price: number; observedAt: number; family?: string }[];
  /** Set when the price is a bar extreme (peaks only): the bar that set it. */
  bar?: BarExtreme;
}

/** A raw detection row (spec 2.6 DepegEvent fields) plus its trace. */
export interface DepegEventRow {
  id: number;
  stablecoinId: string;
  symbol: string;
  pegType: string;
  direction: "above" | "below";
  peakDeviationBps: number;
  startedAt: number;
  endedAt: number | null;
  startPrice: number;
  peakPrice: number | null;
  recoveryPrice: number | null;
  pegReference: number;
  source: "live" | "backfill";
  confirmationSources: string | null;
  pendingReason: string | null;
  closeReason: "recovered-primary" | "coverage-lost-supply" | "superseded-direction" | "orphan-tracking-removed" | null;
  constituentEventCount: number;
  provenance: {
    sourceKind: "live" | "backfill";
    replayRunId: null;
    replayVersion: string;
    sourcePriceProviders: string[];
    quoteMode: string;
    pegReferenceSource: string;
    supplySource: string;
    confirmationPolicy: "none" | "second-category" | "two-point-daily" | "dependency";
    confirmationPointCount: number;
    confidenceTier: "high" | "low";
    auditVerdict: string | null;
    pegScoreEligible: boolean;
    updatedAt: number;
  };
  /** Independent source families whose quotes showed the condition (sorted). */
  families: string[];
  trace: { opened: EventTrace; peak: EventTrace; closed: EventTrace | null; firstSeen: EventTrace };
}

/** A condition waiting for confirmation (spec 2.6 DepegPendingIncident fields). */
export interface PendingIncident {
  stablecoinId: string;
  symbol: string;
  direction: "above" | "below";
  firstSeenAt: number;
  lastSeenAt: number;
  firstSeenBps: number;
  lastSeenBps: number;
  peakSeenBps: number;
  reason: string;
  ageSec: number;
  expiresAt: number;
  availableConfirmationCategories: string[];
  missingConfirmationCategories: string[];
}

/** Deterministic numeric event id (< 2^52) from coin, start and source. */
export function depegEventId(stablecoinId: string, startedAt: number, source: string): number {
  return Number.parseInt(
    createHash("sha256").update(`${stablecoinId}|${startedAt}|${source}`).digest("hex").slice(0, 13),
    16,
  );
}

interface Pending {
  direction: "above" | "below";
  first: EventTrace;
  firstSlot: Slot;
  last: EventTrace;
  peak: EventTrace;
  reasons: Set<string>;
  evidence: Set<string>;
  categories: Set<string>;
  points: number;
  expirySec: number;
}

interface Open {
  row: Omit<DepegEventRow, "endedAt" | "recoveryPrice" | "closeReason" | "trace" | "id" | "families"> & {
    trace: Omit<DepegEventRow["trace"], "closed">;
  };
  providers: Set<string>;
  families: Set<string>;
}

function traceOf(slot: JudgedSlot, bps: number): EventTrace {
  return {
    ts: slot.ts,
    price: slot.consensus.price,
    bps,
    priceSource: slot.consensus.priceSource,
    quotes: slot.quotes.map((q) => ({
      source: q.source,
      category: q.category,
      price: q.price,
      observedAt: q.observedAt,
      family: q.family,
    })),
  };
}

/**
 * The slot's most extreme guarded point in `direction`: its consensus trace, or the bar extreme
 * when that lies further from the reference (`bar` then names the bar that set it).
 */
function extremeOf(slot: Slot, direction: "above" | "below", consensusTrace: EventTrace): EventTrace {
  const bar = direction === "below" ? slot.barLow : slot.barHigh;
  if (!bar || slot.pegReference === null) return consensusTrace;
  const bps = deviationBps(bar.price, slot.pegReference);
  const further = direction === "below" ? bps < consensusTrace.bps : bps > consensusTrace.bps;
  return further ? { ...consensusTrace, price: bar.price, bps, priceSource: bar.source, bar } : consensusTrace;
}

/** Evidence label of a quote: its source family for off-chain quotes, its category (`CEX`, `DEX`, `Pool`) otherwise. */
function labelOf(q: Quote): string {
  return q.category === "off-chain" ? q.family : q.category;
}

/**
 * Labels of the slot's quotes deviating in `direction` by ≥ 50% of the threshold, with their categories
 * and families. `original` is true when the condition rests on more than declared copies: a deviating
 * quote of an original series, or a deviating copy whose family has no original quote in the slot (the
 * copy then stands in for its family: e.g. the DefiLlama price archive for coins CoinGecko's recorded
 * charts do not cover). A copy contradicted by its original in the same slot is never evidence.
 */
function evidenceOf(
  slot: JudgedSlot,
  direction: "above" | "below",
  threshold: number,
): { labels: string[]; categories: string[]; families: string[]; original: boolean } {
  const labels: string[] = [];
  const categories: string[] = [];
  const families: string[] = [];
  let original = false;
  const originalFamilies = new Set(slot.quotes.filter((q) => !q.copied).map((q) => q.family));
  for (const q of slot.quotes) {
    const b = deviationBps(q.price, slot.pegReference);
    if ((direction === "below" ? -b : b) >= threshold * 0.5) {
      if (!q.copied || !originalFamilies.has(q.family)) original = true;
      labels.push(labelOf(q));
      categories.push(q.category);
      families.push(q.family);
    }
  }
  return { labels, categories, families, original };
}

/**
 * A lone contradicted print: a judged slot beyond the threshold whose consensus deviation both
 * neighbouring judged slots contradict (each under half of it and at least CONTRADICTION_BPS
 * smaller in its direction), with no second evidence label and no dependency incident confirming it.
 * Detection does not use it (it neither opens, advances, peaks, closes nor supersedes anything); it
 * stays in the consensus grid and is listed here (`depeg_flagged_prints`, `make backtest`). Bps signed.
 */
export interface FlaggedPrint {
  /** The slot and the quotes behind its consensus. */
  print: EventTrace;
  direction: "above" | "below";
  /** Consensus deviation (bps) of the previous and next judged slots. */
  previousBps: number;
  nextBps: number;
  previousTs: number;
  nextTs: number;
}

/** A confirmed incident of a curated upstream dependency (registry `risk.dependencies`), as dependency confirmation reads it. Times Unix s. */
export interface DependencyIncident {
  stablecoinId: string;
  direction: "above" | "below";
  startedAt: number;
  /** Null while open at as-of. */
  endedAt: number | null;
}

/** Options of {@link detectDepegs}. */
export interface DetectionContext {
  /**
   * Unix s at which tracking of the coin ends (a dead coin, some time after its death), else null:
   * slots from then on are not judged, and an event still open at as-of ends at its last observation
   * (`orphan-tracking-removed`).
   */
  trackingEndsAt?: number | null;
  /** Confirmed incidents of the coin's curated upstream dependencies (dependency confirmation). */
  dependencyIncidents?: DependencyIncident[];
}

/**
 * The dependency incident confirming a condition seen in `slot` going `direction`: same direction, its
 * interval [startedAt, endedAt or as-of] overlapping the time the slot stands for [ts − cadence, ts].
 */
function dependencyConfirmation(
  deps: DependencyIncident[],
  slot: Slot,
  direction: "above" | "below",
  asOf: number,
): DependencyIncident | null {
  const from = slot.ts - Math.max(slot.cadenceSec, SLOT_SEC);
  return deps.find((d) => d.direction === direction && d.startedAt <= slot.ts && (d.endedAt ?? asOf) >= from) ?? null;
}

/**
 * Runs detection over one coin's slots (ascending `ts`). Returns raw event rows (open ones have
 * `endedAt` null), the pending incident still alive at `asOf`, if any, the number of pending
 * incidents that expired unconfirmed, and the lone contradicted prints detection did not use
 * (`flagged`, ascending ts).
 */
export function detectDepegs(
  coin: { stablecoinId: string; symbol: string; pegType: string },
  slots: Slot[],
  asOf: number,
  ctx: DetectionContext = {},
): { rows: DepegEventRow[]; pending: PendingIncident | null; expiredPending: number; flagged: FlaggedPrint[] } {
  const threshold = thresholdBps(coin.pegType);
  const endsAt = ctx.trackingEndsAt ?? null;
  const deps = ctx.dependencyIncidents ?? [];
  const lone = lonePrints(
    slots.filter((s): s is JudgedSlot => isJudged(s) && (endsAt === null || s.ts <= endsAt)),
    threshold,
    deps,
    asOf,
  );
  const flagged: FlaggedPrint[] = [];
  const rows: DepegEventRow[] = [];
  let open: Open | null = null;
  let pending: Pending | null = null;
  let expiredPending = 0;
  // The uninterrupted run of the current condition (same direction, no judged slot inside the threshold).
  type Run = {
    direction: "above" | "below";
    first: EventTrace;
    firstSlot: JudgedSlot;
    peak: EventTrace;
    families: Set<string>;
  };
  let run = null as Run | null;
  let lastJudged: Slot | null = null;
  let lastTrace: EventTrace | null = null;

  const finish = (
    o: Open,
    endedAt: number | null,
    reason: DepegEventRow["closeReason"],
    recoveryPrice: number | null,
    closed: EventTrace | null,
  ) => {
    rows.push({
      ...o.row,
      id: depegEventId(coin.stablecoinId, o.row.startedAt, o.row.source),
      endedAt,
      recoveryPrice,
      closeReason: reason,
      provenance: { ...o.row.provenance, sourcePriceProviders: [...o.providers].sort() },
      families: [...o.families].sort(),
      trace: { ...o.row.trace, closed },
    });
  };
  const close = (
    o: Open,
    slot: JudgedSlot,
    reason: DepegEventRow["closeReason"],
    recoveryPrice: number | null,
    bps: number,
  ) => {
    finish(o, slot.ts, reason, recoveryPrice, traceOf(slot, bps));
    open = null;
  };

  /** Opens the event (sets `open`) and returns it. */
  const openEvent = (
    first: EventTrace,
    firstSlot: JudgedSlot,
    peak: EventTrace,
    direction: "above" | "below",
    confirmation: {
      sources: string | null;
      reasons: string | null;
      policy: DepegEventRow["provenance"]["confirmationPolicy"];
      points: number;
    },
    opened: EventTrace,
    families: Set<string>,
  ): Open => {
    const low =
      firstSlot.consensus.priceConfidence === "low" ||
      firstSlot.consensus.priceConfidence === "fallback" ||
      families.size < 2;
    const o: Open = {
      row: {
        stablecoinId: coin.stablecoinId,
        symbol: coin.symbol,
        pegType: coin.pegType,
        direction,
        peakDeviationBps: peak.bps,
        startedAt: first.ts,
        startPrice: first.price,
        peakPrice: peak.price,
        pegReference: firstSlot.pegReference,
        source: firstSlot.kind,
        confirmationSources: confirmation.sources,
        pendingReason: confirmation.reasons,
        constituentEventCount: 1,
        provenance: {
          sourceKind: firstSlot.kind,
          replayRunId: null,
          replayVersion: DEPEG_METHODOLOGY_VERSION,
          sourcePriceProviders: [],
          quoteMode: "slot-consensus-15m",
          pegReferenceSource: firstSlot.referenceSource,
          supplySource: firstSlot.supplySource,
          confirmationPolicy: confirmation.policy,
          confirmationPointCount: confirmation.points,
          confidenceTier: low ? "low" : "high",
          auditVerdict: null,
          pegScoreEligible: true,
          updatedAt: asOf,
        },
        trace: { firstSeen: first, opened, peak },
      },
      providers: new Set(firstSlot.quotes.map((q) => q.source)),
      families: new Set(families),
    };
    open = o;
    return o;
  };

  for (const slot of slots) {
    if (!isJudged(slot)) continue;
    const price = slot.consensus.price;
    // A dead coin is not tracked once its grace period is over.
    if (endsAt !== null && slot.ts > endsAt) break;
    // Coverage gap: claim nothing across time that was not observed.
    if (lastJudged && slot.ts - lastJudged.ts > coverageGapSec(lastJudged)) {
      if (open) {
        finish(
          open,
          lastJudged.ts + Math.max(lastJudged.cadenceSec, SLOT_SEC),
          "orphan-tracking-removed",
          null,
          lastTrace,
        );
        open = null;
      }
      if (pending) {
        if (slot.ts - pending.first.ts <= pending.expirySec) expiredPending++;
        pending = null;
      }
      run = null;
    }
    lastJudged = slot;
    // A lone print its neighbours contradict is no evidence (it still counts as tracked time).
    const flag = lone.get(slot);
    if (flag) {
      flagged.push(flag);
      continue;
    }
    const bps = deviationBps(price, slot.pegReference);
    lastTrace = traceOf(slot, bps);
    const direction = bps >= 0 ? "above" : "below";
    const beyond = Math.abs(bps) >= threshold;
    if (slot.supplyUsd !== null && slot.supplyUsd < SUPPLY_FLOOR_USD) {
      if (open) close(open, slot, "coverage-lost-supply", null, bps);
      pending = null;
      run = null;
      continue;
    }
    if (!beyond || run?.direction !== direction) run = null;
    const ev = beyond
      ? evidenceOf(slot, direction, threshold)
      : { labels: [], categories: [], families: [], original: false };
    if (beyond) {
      const t = lastTrace;
      const x = extremeOf(slot, direction, t);
      if (!run) run = { direction, first: t, firstSlot: slot, peak: x, families: new Set(ev.families) };
      else {
        if (Math.abs(x.bps) > Math.abs(run.peak.bps)) run.peak = x;
        for (const f of ev.families) run.families.add(f);
      }
    }
    if (open) {
      const o: Open = open;
      if (beyond && direction === o.row.direction) {
        for (const q of slot.quotes) o.providers.add(q.source);
        for (const f of ev.families) o.families.add(f);
        const x = extremeOf(slot, direction, lastTrace);
        if (Math.abs(x.bps) > Math.abs(o.row.peakDeviationBps)) {
          o.row.peakDeviationBps = x.bps;
          o.row.peakPrice = x.price;
          o.row.trace.peak = x;
        }
        continue;
      }
      if (beyond) close(o, slot, "superseded-direction", null, bps);
      else {
        close(o, slot, "recovered-primary", price, bps);
        pending = null;
        continue;
      }
    }
    if (!beyond) {
      pending = null;
      continue;
    }
    // Only a copy of another upstream's series shows the condition: not evidence on its own.
    if (!ev.original) continue;
    // Set above for every slot beyond the threshold.
    const r = must(run, "condition run of a slot beyond the threshold");

    const t = r.first.ts === slot.ts ? r.first : lastTrace;
    const reasons: string[] = [];
    const daily = slot.kind === "backfill" && slot.cadenceSec >= 86400;
    const supply = slot.supplyUsd ?? 0;
    if (supply >= LARGE_CAP_USD || (supply >= SOFT_LARGE_CAP_USD && Math.abs(bps) >= 2 * threshold))
      reasons.push("large-cap");
    if (slot.consensus.priceConfidence === "low" || slot.consensus.priceConfidence === "fallback")
      reasons.push("low-confidence");
    if (Math.abs(bps) >= EXTREME_MOVE_BPS && !daily) reasons.push("extreme-move");
    // Daily history: one point of one family is not enough (two-point rule), except a crash ≥ 5000 bps.
    if (daily && new Set(ev.labels).size < 2 && Math.abs(bps) < EXTREME_MOVE_BPS) reasons.push("single-daily-point");
    if (pending && (pending.direction !== direction || slot.ts - pending.first.ts > pending.expirySec)) {
      if (pending.direction === direction) expiredPending++;
      pending = null;
    }
    if (!pending && reasons.length === 0) {
      openEvent(
        r.first,
        r.firstSlot,
        r.peak,
        direction,
        { sources: null, reasons: null, policy: "none", points: 1 },
        t,
        r.families,
      );
      continue;
    }
    if (!pending) {
      pending = {
        direction,
        first: t,
        firstSlot: slot,
        last: t,
        peak: t,
        reasons: new Set(reasons),
        evidence: new Set(ev.labels),
        categories: new Set(ev.categories),
        points: 1,
        expirySec: daily ? DAILY_PENDING_EXPIRY_SEC : INTRADAY_PENDING_EXPIRY_SEC,
      };
    } else {
      const p: Pending = pending;
      p.last = t;
      p.points++;
      if (Math.abs(bps) > Math.abs(p.peak.bps)) p.peak = t;
      for (const r of reasons) p.reasons.add(r);
      for (const l of ev.labels) p.evidence.add(l);
      for (const c of ev.categories) p.categories.add(c);
    }
    const p: Pending = pending;
    const needsMarket = p.reasons.has("low-confidence");
    const hasMarket = [...p.categories].some((c) => c !== "off-chain");
    const byCategory = p.evidence.size >= 2 && (!needsMarket || hasMarket);
    const elapsed = slot.ts - p.first.ts;
    const byTwoPoint =
      daily && p.points >= 2 && elapsed >= DAILY_SECOND_POINT_MIN_SEC && elapsed <= DAILY_PENDING_EXPIRY_SEC;
    // Dependency confirmation: a confirmed incident of a curated upstream dependency, same direction, at the same time.
    const dep = byCategory || byTwoPoint || needsMarket ? null : dependencyConfirmation(deps, slot, direction, asOf);
    if (byCategory || byTwoPoint || dep) {
      const opened = openEvent(
        r.first,
        r.firstSlot,
        r.peak,
        direction,
        {
          sources:
            [
              ...[...p.evidence].sort(),
              ...(dep && !byCategory && !byTwoPoint ? [`dependency:${dep.stablecoinId}`] : []),
            ].join("+") || null,
          reasons: [...p.reasons].sort().join("+") || null,
          policy: byCategory ? "second-category" : byTwoPoint ? "two-point-daily" : "dependency",
          points: p.points,
        },
        t,
        r.families,
      );
      for (const q of r.firstSlot.quotes) opened.providers.add(q.source);
      pending = null;
    }
  }
  // Tracking lost by as-of: the coin's tracking ended (death), or its last judged slot is older than the coverage gap. An
  // event still open ends after its last observation; nothing is claimed across unobserved time.
  const trackingLost =
    lastJudged !== null && ((endsAt !== null && endsAt <= asOf) || asOf - lastJudged.ts > coverageGapSec(lastJudged));
  if (open) {
    if (trackingLost && lastJudged)
      finish(
        open,
        lastJudged.ts + Math.max(lastJudged.cadenceSec, SLOT_SEC),
        "orphan-tracking-removed",
        null,
        lastTrace,
      );
    else finish(open, null, null, null, null);
  }
  if (trackingLost && pending) {
    expiredPending++;
    pending = null;
  }
  let alive: PendingIncident | null = null;
  if (pending && asOf - pending.first.ts <= pending.expirySec) {
    const p: Pending = pending;
    const all = ["off-chain", "CEX", "DEX", "Pool"];
    alive = {
      stablecoinId: coin.stablecoinId,
      symbol: coin.symbol,
      direction: p.direction,
      firstSeenAt: p.first.ts,
      lastSeenAt: p.last.ts,
      firstSeenBps: p.first.bps,
      lastSeenBps: p.last.bps,
      peakSeenBps: p.peak.bps,
      reason: [...p.reasons].sort().join("+"),
      ageSec: asOf - p.first.ts,
      expiresAt: p.first.ts + p.expirySec,
      availableConfirmationCategories: all.filter((c) => p.categories.has(c)),
      missingConfirmationCategories: all.filter((c) => !p.categories.has(c)),
    };
  } else if (pending) expiredPending++;
  return { rows, pending: alive, expiredPending, flagged };
}

/**
 * Lone contradicted prints among a coin's judged slots (ascending ts), keyed by slot. A slot is one
 * when its consensus deviation `p` is beyond the threshold, it has a previous and a next judged slot
 * each within the coverage gap (max(3 × cadence, 6 h)) of it, both neighbours' deviations in p's
 * direction are under |p| / 2 and at least CONTRADICTION_BPS under |p|, and nothing confirms it at
 * its time: fewer than two evidence labels (independent families, or market categories) show the
 * condition in the slot, and no curated dependency has a confirmed incident that way overlapping it.
 * The last slot (no next observation by as-of) is never lone.
 */
function lonePrints(
  judged: JudgedSlot[],
  threshold: number,
  deps: DependencyIncident[],
  asOf: number,
): Map<Slot, FlaggedPrint> {
  const out = new Map<Slot, FlaggedPrint>();
  for (let i = 1; i + 1 < judged.length; i++) {
    const [prev, s, next] = [judged[i - 1], judged[i], judged[i + 1]];
    if (s.ts - prev.ts > coverageGapSec(prev) || next.ts - s.ts > coverageGapSec(s)) continue;
    const bps = deviationBps(s.consensus.price, s.pegReference);
    if (Math.abs(bps) < threshold) continue;
    const sign = Math.sign(bps);
    const p = Math.abs(bps);
    const [pb, nb] = [prev, next].map((n) => deviationBps(n.consensus.price, n.pegReference));
    const contradicts = (b: number) => sign * b < p / 2 && p - sign * b >= CONTRADICTION_BPS;
    if (!contradicts(pb) || !contradicts(nb)) continue;
    const direction = bps >= 0 ? "above" : "below";
    if (new Set(evidenceOf(s, direction, threshold).labels).size >= 2) continue;
    if (dependencyConfirmation(deps, s, direction, asOf)) continue;
    out.set(s, {
      print: traceOf(s, bps),
      direction,
      previousBps: pb,
      nextBps: nb,
      previousTs: prev.ts,
      nextTs: next.ts,
    });
  }
  return out;
}

/**
 * Links raw rows (any order) of one coin into incidents: same direction, gap from the previous
 * row's end to the next start ≤ 6 h, previous closed by recovery. Returns incidents sorted by
 * `startedAt` ascending; each keeps its first row's id, start and start price.
 */
export function linkIncidents(rows: DepegEventRow[]): DepegEventRow[] {
  const sorted = [...rows].sort((a, b) => a.startedAt - b.startedAt || a.id - b.id);
  const out: DepegEventRow[] = [];
  for (const r of sorted) {
    const prev = out.at(-1);
    if (
      prev &&
      prev.stablecoinId === r.stablecoinId &&
      prev.direction === r.direction &&
      prev.endedAt !== null &&
      prev.closeReason === "recovered-primary" &&
      r.startedAt - prev.endedAt <= REOPEN_WINDOW_SEC
    ) {
      out[out.length - 1] = mergeIncidents(prev, r);
      continue;
    }
    out.push(r);
  }
  return out;
}

/**
 * One incident from `prev` and the later `next` of the same coin and direction (linkIncidents, and an
 * operator's `synthetic-splits` repair verdict): `prev`'s id, start and start price; the worse peak
 * (|bps|); `next`'s end, recovery and close reason; constituent counts, families, providers and
 * confirmation points summed or united.
 */
export function mergeIncidents(prev: DepegEventRow, next: DepegEventRow): DepegEventRow {
  const worse = Math.abs(next.peakDeviationBps) > Math.abs(prev.peakDeviationBps);
  return {
    ...prev,
    peakDeviationBps: worse ? next.peakDeviationBps : prev.peakDeviationBps,
    peakPrice: worse ? next.peakPrice : prev.peakPrice,
    endedAt: next.endedAt,
    recoveryPrice: next.recoveryPrice,
    closeReason: next.closeReason,
    constituentEventCount: prev.constituentEventCount + next.constituentEventCount,
    families: [...new Set([...prev.families, ...next.families])].sort(),
    provenance: {
      ...prev.provenance,
      sourcePriceProviders: [
        ...new Set([...prev.provenance.sourcePriceProviders, ...next.provenance.sourcePriceProviders]),
      ].sort(),
      confirmationPointCount: prev.provenance.confirmationPointCount + next.provenance.confirmationPointCount,
    },
    trace: { ...prev.trace, peak: worse ? next.trace.peak : prev.trace.peak, closed: next.trace.closed },
  };
}
