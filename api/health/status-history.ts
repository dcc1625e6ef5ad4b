import { check } from "./causes.ts";
import { age, type HealthClock, isoMinute } from "./format.ts";
import type { Check, StatusHistoryHealth } from "./types.ts";

/**
 * This process's status-history recorder: section `statusHistory` (`lastRecordedAt` shifted onto the
 * clock of `timestamp`; undefined without a recorder). Failing writes are a note (no effect on
 * status): how many observations wait in memory and when the last one was written.
 */
export function statusHistoryCheck(
  status: StatusHistoryHealth | undefined,
  clock: HealthClock,
): Check<StatusHistoryHealth | undefined> {
  const recorder = status && { ...status, lastRecordedAt: clock.onClock(status.lastRecordedAt) };
  if (recorder?.state !== "unavailable") return check(recorder);
  const last =
    recorder.lastRecordedAt === null
      ? "never"
      : `${isoMinute(recorder.lastRecordedAt)} (${age(Math.max(0, clock.now - recorder.lastRecordedAt))} before now)`;
  return check(recorder, {
    notes: [
      `status history recording failing (no effect on status): ${recorder.lastError ?? "unknown error"}; ${recorder.pendingObservations} observation(s) kept in memory and written once the store answers; last written ${last}. /api/public-status-history may lag until then.`,
    ],
  });
}
