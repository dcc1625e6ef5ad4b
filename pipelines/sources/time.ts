import { IANAZone } from "luxon";

/**
 * Time-zone handling for upstream time labels, and the one daily-alignment rule every source
 * follows. Zone offsets come from the IANA time-zone database through Luxon (over the
 * platform's `Intl`); no DST rule is written here.
 *
 * DAILY ALIGNMENT RULE. Every daily row stands for one 00:00 UTC instant and is stored under
 * that UTC date (`YYYY-MM-DD`). A reader declares its file's IANA zone and whether a label is a
 * day or an instant:
 * - a day label `D` names the local calendar day [D 00:00, D+1 00:00) in the zone; the row is the
 *   unique 00:00 UTC instant inside that span (America/New_York `D` → D+1 00:00Z; UTC `D` → D);
 * - an instant label (a local wall time converted to UTC through the zone, or epoch s/ms) must lie
 *   within ±1 h of a 00:00 UTC boundary and belongs to that boundary;
 * a row with no such instant is rejected and counted as `off-day-boundary` (an unparseable label
 * as `time-label-invalid`). Intraday rows (klines, range bars, supply samples) keep their UTC
 * instant and are dated by its UTC calendar day.
 */

/** Seconds in a UTC day. */
export const DAY_SEC = 86_400;

/** Largest distance (s) between an instant label and the 00:00 UTC boundary it is assigned to. */
export const DAILY_POINT_TOLERANCE_SEC = 3_600;

/** Drop reason: a daily label whose UTC instant is not within tolerance of a 00:00 UTC boundary. */
export const OFF_DAY_BOUNDARY = "off-day-boundary";

/** Drop reason: a time label that does not parse (format, impossible date, non-existent local time). */
export const TIME_LABEL_INVALID = "time-label-invalid";

/** Wall-clock fields of a local time (month 1–12). Seconds may carry a fraction. */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** Most zoned wall times wallTimeToUnix remembers (the memo is emptied when full). */
const ZONED_MEMO_LIMIT = 100_000;
const zonedMemo = new Map<string, number>();

/**
 * Unix seconds (UTC) of local wall time `w` in IANA `zone` (tz database via Luxon). For a wall time
 * that occurs twice (DST fall-back) the earlier instant is returned; for one that does not exist
 * (spring-forward gap), an impossible calendar date or an unknown zone, NaN. A UTC wall time needs
 * no zone rules; a zoned one is remembered (a day label's end is the next day's start).
 */
export function wallTimeToUnix(w: WallTime, zone: string): number {
  if (!(w.second >= 0 && w.second < 60)) return NaN;
  const whole = Math.floor(w.second);
  const millisecond = Math.round((w.second - whole) * 1000);
  if (zone === "UTC") return utcMillisOfWallTime(w, whole, millisecond) / 1000;
  const key = `${zone} ${w.year} ${w.month} ${w.day} ${w.hour} ${w.minute} ${w.second}`;
  const known = zonedMemo.get(key);
  if (known !== undefined) return known;
  if (zonedMemo.size >= ZONED_MEMO_LIMIT) zonedMemo.clear();
  const unix = zonedWallTimeToUnix(w, zone, whole, millisecond);
  zonedMemo.set(key, unix);
  return unix;
}

/** Milliseconds in a day: the zone offsets a day before and after a wall time are its candidate offsets. */
const DAY_MS = DAY_SEC * 1000;

/**
 * wallTimeToUnix in an IANA zone: a wall time is the instant `t` with `t + offset(t) = wall time read
 * as UTC`, where `offset` is the zone's UTC offset (minutes) at an instant from the tz database
 * (Luxon's IANAZone). The candidate offsets are those in force a day before, at, and a day after the
 * wall time; a candidate instant counts when the zone's offset there is the candidate's. None: the
 * wall time falls in a gap (NaN); two: it occurs twice and the earlier is returned. `whole` and
 * `millisecond` split `w.second`.
 */
function zonedWallTimeToUnix(w: WallTime, zone: string, whole: number, millisecond: number): number {
  const tz = IANAZone.create(zone);
  const local = utcMillisOfWallTime(w, whole, millisecond);
  if (!tz.isValid || Number.isNaN(local)) return NaN;
  let earliest = NaN;
  const tried = new Set<number>();
  for (const probe of [local - DAY_MS, local, local + DAY_MS]) {
    const offset = offsetAt(tz, probe);
    if (tried.has(offset)) continue;
    tried.add(offset);
    const instant = local - offset * 60_000;
    if (offsetAt(tz, instant) === offset && !(instant >= earliest)) earliest = instant;
  }
  return earliest / 1000;
}

/** Most zone offsets offsetAt remembers per zone (the memo is emptied when full). */
const OFFSET_MEMO_LIMIT = 100_000;
const offsetMemo = new Map<string, Map<number, number>>();

/**
 * `tz.offset(ms)` (minutes), remembered: consecutive days' wall times probe the same instants
 * (a day's `local + 1 day` is the next day's `local`), and each look-up is an Intl call.
 */
function offsetAt(tz: IANAZone, ms: number): number {
  let memo = offsetMemo.get(tz.name);
  if (!memo || memo.size >= OFFSET_MEMO_LIMIT) {
    memo = new Map();
    offsetMemo.set(tz.name, memo);
  }
  let offset = memo.get(ms);
  if (offset === undefined) {
    offset = tz.offset(ms);
    memo.set(ms, offset);
  }
  return offset;
}

/**
 * Milliseconds of wall time `w` read as UTC (`whole` seconds and `millisecond`), or NaN when a field is
 * out of range (an impossible calendar date, hour 24, minute 60, millisecond 1000 …).
 */
function utcMillisOfWallTime(w: WallTime, whole: number, millisecond: number): number {
  if (!Number.isInteger(w.year) || millisecond >= 1000) return NaN;
  const d = new Date(0);
  d.setUTCFullYear(w.year, w.month - 1, w.day);
  d.setUTCHours(w.hour, w.minute, whole, millisecond);
  const same =
    d.getUTCFullYear() === w.year &&
    d.getUTCMonth() === w.month - 1 &&
    d.getUTCDate() === w.day &&
    d.getUTCHours() === w.hour &&
    d.getUTCMinutes() === w.minute;
  return same ? d.getTime() : NaN;
}

/** A parsed time label: a whole local day, or an instant (both as Unix seconds, UTC). */
export type TimeLabel =
  | { kind: "day"; date: string; startSec: number; endSec: number }
  | { kind: "instant"; unixSec: number };

const LABEL_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?)?\s*(Z|UTC)?$/;

/**
 * Parses an upstream time label in IANA `zone`: `YYYY-MM-DD` (a day label, the local calendar
 * day [D 00:00, D+1 00:00)) or `YYYY-MM-DD[ T]hh:mm[:ss[.fff]]` (an instant label, local wall
 * time). A trailing `Z`/`UTC` marks the label as UTC and is only accepted when `zone` is UTC.
 * Returns null for anything else.
 */
export function parseTimeLabel(text: string, zone: string): TimeLabel | null {
  const m = LABEL_RE.exec(text.trim());
  if (!m) return null;
  if (m[7] && zone !== "UTC") return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (m[4] === undefined) {
    const start = wallTimeToUnix({ year, month, day, hour: 0, minute: 0, second: 0 }, zone);
    const next = new Date(Date.UTC(year, month - 1, day + 1));
    const end = wallTimeToUnix(
      {
        year: next.getUTCFullYear(),
        month: next.getUTCMonth() + 1,
        day: next.getUTCDate(),
        hour: 0,
        minute: 0,
        second: 0,
      },
      zone,
    );
    if (!Number.isFinite(start) || !Number.isFinite(end)) return null;
    return { kind: "day", date: `${m[1]}-${m[2]}-${m[3]}`, startSec: start, endSec: end };
  }
  const unixSec = wallTimeToUnix(
    { year, month, day, hour: Number(m[4]), minute: Number(m[5]), second: Number(m[6] ?? 0) },
    zone,
  );
  return Number.isFinite(unixSec) ? { kind: "instant", unixSec } : null;
}

/**
 * The daily rule for an instant: Unix seconds (UTC) of the 00:00 UTC boundary within
 * ±DAILY_POINT_TOLERANCE_SEC of `unixSeconds`, or null when there is none (or the input is not finite).
 */
export function utcDailyPointOfInstant(unixSeconds: number): number | null {
  if (!Number.isFinite(unixSeconds)) return null;
  const nearest = Math.round(unixSeconds / DAY_SEC) * DAY_SEC;
  return Math.abs(unixSeconds - nearest) <= DAILY_POINT_TOLERANCE_SEC ? nearest : null;
}

/**
 * The daily rule for any label: Unix seconds (UTC) of the 00:00 UTC instant a label stands for
 * (see the module doc), or null when it stands for none. A day label yields the unique 00:00 UTC
 * instant in [start, end).
 */
export function utcDailyPointOfLabel(label: TimeLabel): number | null {
  if (label.kind === "instant") return utcDailyPointOfInstant(label.unixSec);
  const first = Math.ceil(label.startSec / DAY_SEC) * DAY_SEC;
  if (first >= label.endSec || first + DAY_SEC < label.endSec) return null;
  return first;
}

/**
 * Result of aligning one daily label: the UTC date (`YYYY-MM-DD`) and Unix seconds of its
 * 00:00 UTC point, or the drop reason.
 */
export type DailyAlignment =
  | { ok: true; date: string; unixSec: number }
  | { ok: false; reason: typeof OFF_DAY_BOUNDARY | typeof TIME_LABEL_INVALID };

/** Applies the daily rule to a text label in IANA `zone` (see parseTimeLabel). */
export function alignDailyLabel(text: string, zone: string): DailyAlignment {
  const label = parseTimeLabel(text, zone);
  if (!label) return { ok: false, reason: TIME_LABEL_INVALID };
  const point = utcDailyPointOfLabel(label);
  return point === null ? { ok: false, reason: OFF_DAY_BOUNDARY } : { ok: true, date: isoDate(point), unixSec: point };
}

/** Applies the daily rule to an instant in Unix seconds (UTC). */
export function alignDailyInstant(unixSeconds: number): DailyAlignment {
  if (!Number.isFinite(unixSeconds)) return { ok: false, reason: TIME_LABEL_INVALID };
  const point = utcDailyPointOfInstant(unixSeconds);
  return point === null ? { ok: false, reason: OFF_DAY_BOUNDARY } : { ok: true, date: isoDate(point), unixSec: point };
}

/** Unix seconds → `YYYY-MM-DD` of its UTC calendar day. */
export function isoDate(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().slice(0, 10);
}

/**
 * What a reader writes into an upstream-shaped payload for a label in IANA `zone`: an instant
 * label becomes its exact UTC instant (the endpoint's parser then applies the ±1 h daily rule);
 * a day label becomes the 00:00 UTC instant inside that local day. Unix seconds, or the drop reason.
 */
export function labelToUtcInstant(
  text: string,
  zone: string,
): { ok: true; unixSec: number } | { ok: false; reason: typeof OFF_DAY_BOUNDARY | typeof TIME_LABEL_INVALID } {
  const label = parseTimeLabel(text, zone);
  if (!label) return { ok: false, reason: TIME_LABEL_INVALID };
  if (label.kind === "instant") return { ok: true, unixSec: label.unixSec };
  const point = utcDailyPointOfLabel(label);
  return point === null ? { ok: false, reason: OFF_DAY_BOUNDARY } : { ok: true, unixSec: point };
}

/** Unix seconds of 00:00 UTC of a `YYYY-MM-DD` date (the first 10 characters of `iso`). */
export function utcDayStart(iso: string): number {
  return Date.parse(`${iso.slice(0, 10)}T00:00:00Z`) / 1000;
}

/** Time semantics of a snapshot payload: it holds the state at its observation time, no daily points. */
export const SNAPSHOT_TIME: { zone: string; dailyBucket: string } = {
  zone: "UTC",
  dailyBucket: "snapshot at observedAt (no daily points)",
};
