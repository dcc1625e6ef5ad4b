import type { z } from "zod";
import type { BlacklistEvent } from "../../../site-data/blacklist.ts";
import type { DepegEvent } from "../../../site-data/depeg-events.ts";
import type { SafetyGradesPayloadSchema } from "../../../site-data/report-cards.ts";

/**
 * Chat alerts (spec 6, issue 20 item 4): what a newly published build brings relative to the build
 * the dispatcher handled before it. Pure functions over parsed published payloads; the dispatcher
 * (dispatch.ts) reads the payloads, stores the alerts as deliveries and sends them.
 *
 * What counts as an alert (methodology):
 * - `depeg-started`: a depeg incident (site-data/depeg-events.json, spec 2.6) whose id was not in the
 *   previous build and that started within {@link AlertOptions.recentWindowSec} (default 7 days)
 *   of the new build's as-of. Incident ids are derived from (coin, start, source), so a linked
 *   incident keeps its id; an old incident that only appears now (a backfill) is history, not news,
 *   and is counted in `skipped.historical`.
 * - `depeg-ended`: an incident open (`endedAt` null) in the previous build and closed in the new one.
 * - `grade-change`: a coin's safety grade (site-data/safety-grades.json, spec 2.13) differs from its
 *   grade in the previous build, both letter grades (A+ … F). Changes to or from `NR` (an input went
 *   missing or came back: a data event, not a risk event) are counted in `skipped.notRated`. Sent
 *   only when the grade source is `ok` (see {@link SafetySourceState}); otherwise suppressed.
 * - `large-freeze`: a `blacklist` (freeze) or `destroy` event (site-data/blacklist-events.json,
 *   spec 2.5) with `amountUsdAtEvent` ≥ {@link AlertOptions.largeFreezeMinUsd} (default USD 1M),
 *   within the recent window, that was absent from the previous build or had no amount or a
 *   smaller one there (an amount resolved late still alerts once). Events without a USD amount
 *   are skipped and counted (`skipped.freezesWithoutAmount`).
 *
 * A kind is compared only when both builds carry its file: a build missing the depeg or freeze file
 * yields no alerts of that kind (and the next build is compared with it, so nothing floods back).
 * The first build ever handled is the baseline: nothing is sent, so a fresh install does not flood
 * chats with history ({@link diffAlerts} with `prev` null).
 */

/** Alert kinds, in the order a build's alerts are listed. */
export const ALERT_KINDS = ["depeg-started", "depeg-ended", "grade-change", "large-freeze"] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/** Default USD threshold of a large freeze (inclusive). */
export const LARGE_FREEZE_MIN_USD = 1_000_000;
/** Default window (s) before the build's as-of in which an incident's start or a freeze's time must fall to alert: 7 days. */
export const ALERT_RECENT_WINDOW_SEC = 7 * 86_400;
/** Default age (s) beyond which the safety grades are `stale` and grade alerts are suppressed: 48 h (the grades' own hold rule). */
export const SAFETY_SOURCE_MAX_AGE_SEC = 48 * 3600;

/** One message to send to every chat following `coinId`. */
export interface Alert {
  /** Stable id, the delivery queue's dedup key: `depeg:<incidentId>`, `depeg-end:<incidentId>`, `grade:<coinId>:<buildId>`, `freeze:<eventId>`. */
  id: string;
  kind: AlertKind;
  /** Stablecoin id (registry id, e.g. `usd-coin`). */
  coinId: string;
  symbol: string;
  /** Plain-text message (no markup), at most a few lines; ends with the API path of the details. */
  text: string;
  /** API path with the details, e.g. `/api/depeg-events?stablecoin=usda-angle`. */
  link: string;
  /** Unix s of the underlying event (incident start or end, freeze time; the build as-of for grade changes). */
  at: number;
}

/** The safety-grades payload of a build (site-data/safety-grades.json). */
export type SafetyGradesPayload = z.infer<typeof SafetyGradesPayloadSchema>;

/**
 * What alerts are computed from, for one build: its id and as-of (Unix s) and its parsed payloads;
 * `null` when the build has no such file (or it could not be read, for depeg and freezes).
 * `grades` is `"missing"` (no file) or `"corrupt"` (not JSON, or fails its schema).
 */
export interface AlertSnapshot {
  buildId: string;
  asOf: number;
  depeg: readonly DepegEvent[] | null;
  freezes: readonly BlacklistEvent[] | null;
  grades: SafetyGradesPayload | "missing" | "corrupt";
}

/**
 * State of the safety-grade alert source (spec 2.8 `safetyAlertSourceState`): `missing` no grades
 * file, `corrupt` it fails to parse, `stale` its `updatedAt` is older than the budget or its
 * publication is `held`, `wrong-generation` its methodology is not the current one or differs from
 * the previous build's (grades of two methodologies are not comparable), else `ok`.
 */
export type SafetySourceState = "ok" | "missing" | "corrupt" | "stale" | "wrong-generation";

/** The safety-grade source of a build as judged at `dataNowSec`: state, age (s, null when unknown), methodology version (null when unknown). */
export interface SafetySource {
  state: SafetySourceState;
  ageSec: number | null;
  generation: string | null;
  /** Grades' `updatedAt` (Unix s), null when unknown. */
  asOf: number | null;
}

/** Tunables of {@link diffAlerts}; every field has the documented default. */
export interface AlertOptions {
  /** USD amount from which a freeze or destroy alerts (inclusive); default {@link LARGE_FREEZE_MIN_USD}. */
  largeFreezeMinUsd?: number;
  /** Window (s) before the build as-of for incident starts and freeze times; default {@link ALERT_RECENT_WINDOW_SEC}. */
  recentWindowSec?: number;
  /** Safety grades older than this (s) are stale; default {@link SAFETY_SOURCE_MAX_AGE_SEC}. */
  safetyMaxAgeSec?: number;
  /** Prefix of the details link in the text (e.g. `https://ballast.example`); default none (path only). */
  linkBase?: string;
}

/** Counts of candidates that did not become alerts, by reason. */
export interface SkippedCounts {
  /** New incidents or freezes older than the recent window (history, e.g. a backfill). */
  historical: number;
  /** New freeze/destroy events without a USD amount. */
  freezesWithoutAmount: number;
  /** Grade changes to or from NR. */
  notRated: number;
  /** Grade changes not sent because the grade source was not ok. */
  gradeSuppressed: number;
  /** Kinds not compared because one of the builds lacks their file (`depeg`, `freezes`, `grades`). */
  sourcesMissing: string[];
}

/** Result of {@link diffAlerts}. */
export interface AlertDiff {
  /** True when there was no previous build: nothing to send, the new build becomes the baseline. */
  baseline: boolean;
  /** Alerts in kind order, then by time and id. */
  alerts: Alert[];
  skipped: SkippedCounts;
  /** The new build's safety-grade source; grade changes are sent only when `ok`. */
  safety: SafetySource;
}

/**
 * Judges a build's safety grades as an alert source at `dataNowSec` (Unix s on the build's data clock:
 * the API's service clock, which is the replay clock for builds made from recorded captures).
 * `prev` (the previous build's grades) decides `wrong-generation` when its methodology differs.
 */
export function safetySource(
  grades: AlertSnapshot["grades"],
  prev: AlertSnapshot["grades"] | null,
  dataNowSec: number,
  maxAgeSec = SAFETY_SOURCE_MAX_AGE_SEC,
): SafetySource {
  if (grades === "missing" || grades === "corrupt")
    return { state: grades, ageSec: null, generation: null, asOf: null };
  const ageSec = Math.max(0, dataNowSec - grades.updatedAt);
  const generation = grades.methodology.version;
  const base = { ageSec, generation, asOf: grades.updatedAt };
  if (ageSec > maxAgeSec || grades.publication.status === "held") return { state: "stale", ...base };
  const prevGeneration = prev && typeof prev === "object" ? prev.methodology.version : null;
  if (!grades.methodology.isCurrent || (prevGeneration !== null && prevGeneration !== generation))
    return { state: "wrong-generation", ...base };
  return { state: "ok", ...base };
}

/**
 * The alerts `next` brings relative to `prev` (the build dispatched before it; null on the first
 * run: baseline, no alerts). `dataNowSec` (Unix s, service clock) judges the grades' age.
 * Deterministic: same inputs, same alerts in the same order. Never throws on well-formed snapshots.
 */
export function diffAlerts(
  prev: AlertSnapshot | null,
  next: AlertSnapshot,
  dataNowSec: number,
  opts: AlertOptions = {},
): AlertDiff {
  const minUsd = opts.largeFreezeMinUsd ?? LARGE_FREEZE_MIN_USD;
  const since = next.asOf - (opts.recentWindowSec ?? ALERT_RECENT_WINDOW_SEC);
  const base = opts.linkBase ?? "";
  const safety = safetySource(next.grades, prev?.grades ?? null, dataNowSec, opts.safetyMaxAgeSec);
  const skipped: SkippedCounts = {
    historical: 0,
    freezesWithoutAmount: 0,
    notRated: 0,
    gradeSuppressed: 0,
    sourcesMissing: [],
  };
  if (!prev) return { baseline: true, alerts: [], skipped, safety };
  const alerts: Alert[] = [];

  // Depeg incidents: new ids (recent), and open → closed.
  if (prev.depeg && next.depeg) {
    const before = new Map(prev.depeg.map((e) => [e.id, e]));
    const started: Alert[] = [];
    const ended: Alert[] = [];
    for (const e of next.depeg) {
      const old = before.get(e.id);
      if (!old) {
        if (e.startedAt < since) skipped.historical++;
        else started.push(depegStartedAlert(e, base));
      } else if (old.endedAt === null && e.endedAt !== null) {
        ended.push(depegEndedAlert(e, e.endedAt, base));
      }
    }
    alerts.push(...sortAlerts(started), ...sortAlerts(ended));
  } else {
    skipped.sourcesMissing.push("depeg");
  }

  // Safety grades: letter grade differs from the previous build's.
  const prevGrades = typeof prev.grades === "object" ? prev.grades : null;
  const nextGrades = typeof next.grades === "object" ? next.grades : null;
  if (prevGrades && nextGrades) {
    const before = new Map(prevGrades.grades.map((g) => [g.id, g]));
    const changes: Alert[] = [];
    for (const g of nextGrades.grades) {
      const old = before.get(g.id);
      if (!old || old.grade === g.grade) continue;
      if (old.grade === "NR" || g.grade === "NR") {
        skipped.notRated++;
        continue;
      }
      if (safety.state !== "ok") {
        skipped.gradeSuppressed++;
        continue;
      }
      changes.push(gradeAlert(next, g, old, base));
    }
    alerts.push(...sortAlerts(changes));
  } else {
    skipped.sourcesMissing.push("grades");
  }

  // Large freezes: at or above the threshold now, and not already large in the previous build.
  if (prev.freezes && next.freezes) {
    const before = new Map(prev.freezes.map((e) => [e.id, e]));
    const large: Alert[] = [];
    for (const e of next.freezes) {
      if (e.eventType === "unblacklist") continue;
      const old = before.get(e.id);
      if (old && old.amountUsdAtEvent !== null && old.amountUsdAtEvent >= minUsd) continue;
      if (e.amountUsdAtEvent === null) {
        if (!old) skipped.freezesWithoutAmount++;
        continue;
      }
      if (e.amountUsdAtEvent < minUsd) continue;
      if (e.timestamp < since) {
        skipped.historical++;
        continue;
      }
      large.push(freezeAlert(e, e.amountUsdAtEvent, base));
    }
    alerts.push(...sortAlerts(large));
  } else {
    skipped.sourcesMissing.push("freezes");
  }
  return { baseline: false, alerts, skipped, safety };
}

const sortAlerts = (a: Alert[]) => a.sort((x, y) => x.at - y.at || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));

/** `2025-09-07 14:03 UTC` */
export function utcMinute(sec: number): string {
  return `${new Date(sec * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** USD amount, compact: `USD 2.50M`, `USD 1.20B`, `USD 950,000`. */
export function formatUsd(usd: number): string {
  const abs = Math.abs(usd);
  if (abs >= 1e9) return `USD ${(usd / 1e9).toFixed(2)}B`;
  if (abs >= 1e6) return `USD ${(usd / 1e6).toFixed(2)}M`;
  return `USD ${Math.round(usd).toLocaleString("en-US")}`;
}

/** `1d 4h`, `3h 20m`, `45m` */
function duration(sec: number): string {
  const d = Math.floor(sec / 86_400);
  const h = Math.floor((sec % 86_400) / 3600);
  const m = Math.floor((sec % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  return `${m}m`;
}

const price = (p: number) => (p >= 100 ? p.toFixed(2) : p.toFixed(4));
const pegCurrency = (pegType: string) => pegType.replace(/^pegged/, "") || pegType;
const bpsText = (bps: number, direction: string) =>
  `${Math.abs(bps)} bps (${(Math.abs(bps) / 100).toFixed(2)}%) ${direction}`;
const shortAddress = (a: string) => (a.length > 14 ? `${a.slice(0, 6)}…${a.slice(-4)}` : a);

function depegStartedAlert(e: DepegEvent, base: string): Alert {
  const link = `/api/depeg-events?stablecoin=${encodeURIComponent(e.stablecoinId)}`;
  const state = e.endedAt === null ? "ongoing" : `ended ${utcMinute(e.endedAt)}`;
  const text = [
    `${e.symbol} depeg: ${bpsText(e.peakDeviationBps, e.direction)} its ${pegCurrency(e.pegType)} peg at peak.`,
    `Price USD ${price(e.peakPrice ?? e.startPrice)} vs peg USD ${price(e.pegReference)}; started ${utcMinute(e.startedAt)}, ${state}.`,
    `Details: ${base}${link}`,
  ].join("\n");
  return {
    id: `depeg:${e.id}`,
    kind: "depeg-started",
    coinId: e.stablecoinId,
    symbol: e.symbol,
    text,
    link,
    at: e.startedAt,
  };
}

/** The alert of an incident that ended at `endedAt` (Unix s; `e.endedAt`, known not null). */
function depegEndedAlert(e: DepegEvent, endedAt: number, base: string): Alert {
  const link = `/api/depeg-events?stablecoin=${encodeURIComponent(e.stablecoinId)}`;
  const how = e.recoveryPrice !== null ? `, recovered at USD ${price(e.recoveryPrice)}` : "";
  const text = [
    `${e.symbol} depeg ended ${utcMinute(endedAt)} after ${duration(endedAt - e.startedAt)} (${e.closeReason ?? "closed"}${how}).`,
    `Peak ${bpsText(e.peakDeviationBps, e.direction)} its ${pegCurrency(e.pegType)} peg.`,
    `Details: ${base}${link}`,
  ].join("\n");
  return {
    id: `depeg-end:${e.id}`,
    kind: "depeg-ended",
    coinId: e.stablecoinId,
    symbol: e.symbol,
    text,
    link,
    at: endedAt,
  };
}

type GradeRow = SafetyGradesPayload["grades"][number];
const GRADE_ORDER = ["A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D", "F", "NR"];

function gradeAlert(next: AlertSnapshot, g: GradeRow, old: GradeRow, base: string): Alert {
  const link = `/api/safety-score-history?stablecoin=${encodeURIComponent(g.id)}`;
  const way = GRADE_ORDER.indexOf(g.grade) < GRADE_ORDER.indexOf(old.grade) ? "upgraded" : "downgraded";
  const score = `score ${old.score ?? "n/a"} → ${g.score ?? "n/a"} of 100`;
  const text = [
    `${g.symbol} safety grade ${way}: ${old.grade} → ${g.grade} (${score}, ${g.methodologyVersion}).`,
    `Details: ${base}${link}`,
  ].join("\n");
  return {
    id: `grade:${g.id}:${next.buildId}`,
    kind: "grade-change",
    coinId: g.id,
    symbol: g.symbol,
    text,
    link,
    at: next.asOf,
  };
}

/** The alert of a large freeze or destroy worth `amountUsd` (`e.amountUsdAtEvent`, known not null). */
function freezeAlert(e: BlacklistEvent, amountUsd: number, base: string): Alert {
  const link = `/api/blacklist?stablecoin=${encodeURIComponent(e.stablecoin)}&eventType=${e.eventType}`;
  const what = e.eventType === "destroy" ? "destroyed (frozen funds burned)" : "frozen";
  const native =
    e.amountNative !== null
      ? ` (${e.amountNative.toLocaleString("en-US", { maximumFractionDigits: 2 })} ${e.stablecoin})`
      : "";
  const lines = [
    `${e.stablecoin} large ${e.eventType === "destroy" ? "destroy" : "freeze"}: ${formatUsd(amountUsd)}${native} ${what} at ${shortAddress(e.address)} on ${e.chainName}, ${utcMinute(e.timestamp)}.`,
  ];
  if (e.explorerTxUrl) lines.push(`Tx: ${e.explorerTxUrl}`);
  lines.push(`Details: ${base}${link}`);
  return {
    id: `freeze:${e.id}`,
    kind: "large-freeze",
    coinId: e.stablecoinId,
    symbol: e.stablecoin,
    text: lines.join("\n"),
    link,
    at: e.timestamp,
  };
}
