import { thresholdBps } from "./depeg-detection.ts";

/**
 * Peg score (methodology `ballast-peg-score-v3`), 0-100, per coin over a 4-year window. Pure.
 * Changelog: v2 (2026-11) — tracking starts at the first accepted price (not supply); no score
 * without a price, a current price or 30 priced days, and none for NAV tokens or floating pegs
 * (pipelines/analytics/peg-summary.ts). v1 — first version.
 *
 * - Window start = max(tracking start, now − 4 × 365.25 d); span = max(now − start, 1 s); fewer than
 *   7 days of span → score null.
 * - pegPct = (1 − time in depeg / observed span) × 100, overlapping incidents merged; the observed
 *   span is the window's span capped at the time actually observed (priced days × 1 d), so time
 *   without any price never counts as time at peg.
 * - Per incident: |peak| bps, duration (days, capped at 90), recency = 1 / (1 + years ago);
 *   penalty = max((|peak|/100) × (days/30) × recency, (|peak|/2000) × recency).
 *   severityScore = max(0, 100 − Σ penalties).
 * - Spread penalty (≥ 2 incidents) = min(15, population std-dev of |peak| / 1000 × 15).
 * - Active penalty = max over open incidents of min(50, max(5, |peak| / 50)).
 * - pegScore = clamp(round(0.5 × pegPct + 0.5 × severityScore − active − spread), 0, 100).
 * Recent window: the same time-at-peg over the *observed* part of the last 90 days (priced UTC days),
 * plus incident and threshold-crossing counts; `observedDays` and `coveragePct` say how much of the
 * window was observed, and `coverageLimited` is true when tracking started inside the window or fewer
 * than 90% of its days were observed. `pegPct` is null when no day of the window was observed.
 * An incident is active at `now` when it started by then and has not ended (`isOpenAt`), whatever
 * the tracking window: an incident opened by the as-of observation is active.
 *
 * Version: `PEG_SCORE_VERSION` (./peg-score.version.ts).
 */
const YEAR = 365.25 * 86400;
const LOOKBACK_SEC = Math.ceil(4 * YEAR);
const RECENT_DAYS = 90;

/** An incident as the score sees it (Unix s; `endedAt` null while open). */
export interface ScoredIncident {
  startedAt: number;
  endedAt: number | null;
  peakDeviationBps: number;
  constituentEventCount: number;
}

export interface PegScore {
  pegScore: number | null;
  pegPct: number | null;
  severityScore: number | null;
  spreadPenalty: number;
  activePenalty: number;
  eventCount: number;
  worstDeviationBps: number | null;
  activeDepeg: boolean;
  lastEventAt: number | null;
  trackingSpanDays: number;
  recent90d: {
    pegPct: number | null;
    incidentCount: number;
    thresholdCrossingCount: number;
    coverageLimited: boolean;
    observedDays: number | null;
    coveragePct: number | null;
  };
}

/** Share of the recent window that must be observed (priced days) for it not to be coverage-limited. */
export const RECENT_MIN_COVERAGE = 0.9;

/** The one definition of "open at t" every consumer reads (peg summary, grades, resolver, tape): started by t, not ended by t. */
export function isOpenAt(e: Pick<ScoredIncident, "startedAt" | "endedAt">, t: number): boolean {
  return e.startedAt <= t && (e.endedAt === null || e.endedAt > t);
}

function timeInDepeg(incidents: ScoredIncident[], from: number, now: number): number {
  const iv = incidents
    .map((e) => [Math.max(e.startedAt, from), Math.min(e.endedAt ?? now, now)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let total = 0,
    curA = -1,
    curB = -1;
  for (const [a, b] of iv) {
    if (a > curB) {
      if (curB > curA) total += curB - curA;
      curA = a;
      curB = b;
    } else curB = Math.max(curB, b);
  }
  if (curB > curA) total += curB - curA;
  return total;
}

/**
 * Scores one coin: `trackingStart` (Unix s, null when nothing was ever observed), its incidents at
 * `now`, `observedSec`, the time with price observations inside the window (default: all of it), and
 * `recentObservedDays`, the priced UTC days of the last 90 (default: unknown, the whole span counts).
 */
export function pegScore(
  incidents: ScoredIncident[],
  trackingStart: number | null,
  now: number,
  observedSec = Number.POSITIVE_INFINITY,
  recentObservedDays: number | null = null,
): PegScore {
  const anchor = trackingStart ?? (incidents.length ? Math.min(...incidents.map((e) => e.startedAt)) : null);
  const start = anchor === null ? null : Math.max(anchor, now - LOOKBACK_SEC);
  const inWindow =
    start === null
      ? []
      : incidents.filter((e) => e.startedAt <= now && ((e.endedAt ?? now) > start || isOpenAt(e, now)));
  const worst = inWindow.reduce<number | null>(
    (w, e) => (w === null || Math.abs(e.peakDeviationBps) > Math.abs(w) ? e.peakDeviationBps : w),
    null,
  );
  const open = incidents.filter((e) => isOpenAt(e, now));
  const activePenalty = open.length
    ? Math.max(...open.map((e) => Math.min(50, Math.max(5, Math.abs(e.peakDeviationBps) / 50))))
    : 0;
  const peaks = inWindow.map((e) => Math.abs(e.peakDeviationBps));
  let spreadPenalty = 0;
  if (peaks.length >= 2) {
    const mean = peaks.reduce((a, b) => a + b, 0) / peaks.length;
    const sd = Math.sqrt(peaks.reduce((a, b) => a + (b - mean) ** 2, 0) / peaks.length);
    spreadPenalty = Math.min(15, (sd / 1000) * 15);
  }
  const recentFrom = Math.max(now - RECENT_DAYS * 86400, start ?? now);
  const recentInc = incidents.filter((e) => e.startedAt <= now && (e.endedAt ?? now) > recentFrom);
  const recentSpan = now - recentFrom;
  const recentDays = Math.ceil(recentSpan / 86400);
  const observedDays = recentObservedDays === null ? null : Math.min(recentObservedDays, recentDays);
  const recentObservedSec = observedDays === null ? recentSpan : Math.min(recentSpan, observedDays * 86400);
  const recentDepeg = timeInDepeg(recentInc, recentFrom, now);
  const recent90d = {
    pegPct:
      start === null || recentSpan <= 0 || recentObservedSec <= 0
        ? null
        : round2(Math.max(0, (1 - recentDepeg / Math.max(recentObservedSec, recentDepeg)) * 100)),
    incidentCount: recentInc.length,
    thresholdCrossingCount: recentInc.reduce((s, e) => s + Math.max(1, e.constituentEventCount), 0),
    coverageLimited:
      start === null ||
      start > now - RECENT_DAYS * 86400 ||
      (observedDays !== null && observedDays < RECENT_MIN_COVERAGE * RECENT_DAYS),
    observedDays,
    coveragePct: observedDays === null ? null : round2((observedDays / RECENT_DAYS) * 100),
  };
  const base = {
    spreadPenalty: round2(spreadPenalty),
    activePenalty: round2(activePenalty),
    eventCount: inWindow.length,
    worstDeviationBps: worst,
    activeDepeg: open.length > 0,
    lastEventAt: inWindow.length ? Math.max(...inWindow.map((e) => e.startedAt)) : null,
    recent90d,
  };
  if (start === null) return { pegScore: null, pegPct: null, severityScore: null, trackingSpanDays: 0, ...base };
  const span = Math.max(now - start, 1);
  const trackingSpanDays = Math.floor(span / 86400);
  if (span < 7 * 86400) return { pegScore: null, pegPct: null, severityScore: null, trackingSpanDays, ...base };
  const depegSec = timeInDepeg(inWindow, start, now);
  const pegPct = Math.max(0, (1 - depegSec / Math.max(Math.min(span, observedSec), depegSec, 1)) * 100);
  let penalties = 0;
  for (const e of inWindow) {
    const peak = Math.abs(e.peakDeviationBps);
    const observedStart = Math.max(e.startedAt, start);
    const days = Math.min(90, Math.max(0, (Math.min(e.endedAt ?? now, now) - observedStart) / 86400));
    const recency = 1 / (1 + (now - observedStart) / YEAR);
    penalties += Math.max((peak / 100) * (days / 30) * recency, (peak / 2000) * recency);
  }
  const severityScore = Math.max(0, 100 - penalties);
  const score = Math.min(
    100,
    Math.max(0, Math.round(0.5 * pegPct + 0.5 * severityScore - activePenalty - spreadPenalty)),
  );
  return { pegScore: score, pegPct: round2(pegPct), severityScore: round2(severityScore), trackingSpanDays, ...base };
}

/** Whether a current deviation is inside the coin's depeg threshold. */
export function atPeg(pegType: string, deviationBps: number): boolean {
  return Math.abs(deviationBps) < thresholdBps(pegType);
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
