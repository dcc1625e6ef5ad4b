/** Minute of a Unix time (s), ISO 8601 UTC: `2025-09-07T00:00Z`. */
export const isoMinute = (t: number): string => `${new Date(t * 1000).toISOString().slice(0, 16)}Z`;

/** Human age of `sec` seconds: seconds below 2 min, minutes below 2 h, hours below 2 days, else days. */
export function age(sec: number): string {
  if (sec < 120) return `${sec} s`;
  if (sec < 7200) return `${Math.floor(sec / 60)} min`;
  if (sec < 2 * 86400) return `${Math.floor(sec / 3600)} h`;
  return `${Math.floor(sec / 86400)} days`;
}

/** Reason counts as `reason n, …`, sorted by reason. */
export const counts = (r: Record<string, number>): string =>
  Object.entries(r)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");

/** Sum of reason counts. */
export const sum = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);

/**
 * The clock of a health assessment: `now` (Unix s of the clock in force, = `timestamp`) and `wallNow`
 * (the wall clock at the same instant). Times taken on the wall clock (state store, recorder,
 * scheduler, bot) are reported shifted by `now − wallNow` (`onClock`), so every time in the body is on
 * the clock of `timestamp`.
 */
export interface HealthClock {
  now: number;
  wallNow: number;
  /** A wall-clock Unix time (s) on the clock of `now`. */
  onClockAt(t: number): number;
  /** `onClockAt`, null kept null. */
  onClock(t: number | null): number | null;
}

/** The HealthClock of `now`, with `wallNow` defaulting to `now` (no shift). */
export function healthClock(now: number, wallNow: number = now): HealthClock {
  const shift = now - wallNow;
  const onClockAt = (t: number) => t + shift;
  return { now, wallNow, onClockAt, onClock: (t) => (t === null ? null : onClockAt(t)) };
}
