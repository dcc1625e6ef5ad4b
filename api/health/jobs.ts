import { producerJobOf, type ScheduleStatus } from "../../site-data/schedule-log.ts";
import { causesOf, check } from "./causes.ts";
import { age, type HealthClock, isoMinute } from "./format.ts";
import type { Check, StatusCause } from "./types.ts";

/** A job is overdue (cause `cron-unhealthy`) when it has not started for 2 × its interval plus this grace (s). */
export const CRON_OVERDUE_GRACE_SEC = 300;

/** A scheduled job as the scheduler's run log records it. */
type Job = ScheduleStatus["jobs"][string];

/**
 * The scheduler's jobs (`scheduler/status.json`; null when no scheduler writes to this storage), by
 * name: a last run that failed sets status degraded (cause `cron-error:<job>`), a job that has not
 * started for 2 × its interval + CRON_OVERDUE_GRACE_SEC (wall clock) too (`cron-unhealthy:<job>`);
 * a partial run (some upstream calls failed) is a note. Times are reported on the clock of `timestamp`.
 */
export function jobsCheck(schedule: ScheduleStatus | null, clock: HealthClock): Check {
  const found = { causes: [] as StatusCause[], statusWarnings: [] as string[], notes: [] as string[] };
  if (!schedule) return check(undefined, found);
  for (const [name, j] of Object.entries(schedule.jobs).sort(([a], [b]) => a.localeCompare(b))) {
    const last = j.lastRun;
    if (last?.status === "error") {
      found.causes.push(...causesOf("degraded", `cron-error:${name}`, `scheduled job ${name}: last run failed`));
      found.statusWarnings.push(
        `scheduled job ${name}: cron error run (sets status degraded): the run of ${isoMinute(clock.onClockAt(last.startedAt))} published nothing: ${last.error ?? "unknown error"}; ${j.consecutiveErrors} consecutive error run(s), last success ${j.lastSuccessAt === null ? "never" : isoMinute(clock.onClockAt(j.lastSuccessAt))}. Data stays as of the last published build.`,
      );
    } else if (last?.status === "partial") {
      found.notes.push(
        `scheduled job ${name}: upstream calls failed in its last run (no effect on status): ${last.captureErrors.map((e) => `${e.endpoint}: ${e.message}`).join("; ")}. The build used the newest earlier capture of these feeds.`,
      );
    }
    const overdue = overdueWarning(name, j, schedule, clock);
    if (overdue) {
      found.causes.push(...causesOf("degraded", `cron-unhealthy:${name}`, `scheduled job ${name} overdue`));
      found.statusWarnings.push(overdue);
    }
  }
  return check(undefined, found);
}

/** The warning of job `name` when it is overdue (no start since 2 × its interval + grace, wall clock), else null. */
function overdueWarning(name: string, j: Job, schedule: ScheduleStatus, clock: HealthClock): string | null {
  const since = j.lastRun?.startedAt ?? schedule.startedAt;
  const stoppedAt = schedule.stoppedAt;
  const idle = clock.wallNow - since;
  if (idle <= 2 * j.intervalSec + CRON_OVERDUE_GRACE_SEC) return null;
  return `scheduled job ${name} overdue (sets status degraded): no run since ${isoMinute(clock.onClockAt(since))} (${age(idle)}; cadence ${age(j.intervalSec)})${stoppedAt !== null ? `; the scheduler stopped at ${isoMinute(clock.onClockAt(stoppedAt))}` : ""}. Start \`tsx build/cli.ts schedule\` (docs/runbooks/running-live.md).`;
}

/** Producer job of a cache key, its cadence (s; null for `build`) and last successful run (Unix s on the clock of `timestamp`; null if never or unknown). */
export interface Producer {
  producerJob: string;
  producerIntervalSec: number | null;
  lastSuccessAt: number | null;
}

/**
 * Producer of each cache key: the scheduled job that refreshes its inputs (producerJobOf) when the
 * scheduler's run log lists it, else `build` (a build run by hand) with no cadence and no last run.
 */
export function producersOf(schedule: ScheduleStatus | null, clock: HealthClock): (key: string) => Producer {
  return (key) => {
    const job = producerJobOf(key);
    const j = schedule?.jobs[job];
    return j
      ? { producerJob: job, producerIntervalSec: j.intervalSec, lastSuccessAt: clock.onClock(j.lastSuccessAt) }
      : { producerJob: "build", producerIntervalSec: null, lastSuccessAt: null };
  };
}
