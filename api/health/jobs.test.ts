import { describe, expect, it } from "vitest";
import type { ScheduleStatus } from "../../site-data/schedule-log.ts";
import { healthClock } from "./format.ts";
import { CRON_OVERDUE_GRACE_SEC, jobsCheck, producersOf } from "./jobs.ts";

// Spec 2.9: a cron error run and an overdue job (no start for 2 × interval + grace) are public-impact causes.
const T = 1_757_203_200;
type Job = ScheduleStatus["jobs"][string];
const job = (over: Partial<Job>): Job =>
  ({ intervalSec: 600, lastSuccessAt: T - 600, consecutiveErrors: 0, lastRun: null, ...over }) as Job;
const schedule = (jobs: Record<string, Job>): ScheduleStatus =>
  ({ startedAt: T - 3600, stoppedAt: null, jobs }) as unknown as ScheduleStatus;

describe("scheduler jobs check", () => {
  it("no scheduler: nothing; producers are `build` without cadence", () => {
    const c = jobsCheck(null, healthClock(T));
    expect([c.causes, c.statusWarnings, c.notes]).toEqual([[], [], []]);
    expect(producersOf(null, healthClock(T))("stablecoins")).toEqual({
      producerJob: "build",
      producerIntervalSec: null,
      lastSuccessAt: null,
    });
  });

  it("a failed last run degrades (cron-error:<job>); a partial one is a note", () => {
    const c = jobsCheck(
      schedule({
        a: job({
          consecutiveErrors: 2,
          lastRun: { status: "error", startedAt: T - 60, error: "boom", captureErrors: [] } as never,
        }),
        b: job({
          lastRun: {
            status: "partial",
            startedAt: T - 60,
            error: null,
            captureErrors: [{ endpoint: "x.y", message: "HTTP 500" }],
          } as never,
        }),
      }),
      healthClock(T),
    );
    expect(c.causes).toEqual([
      { code: "cron-error:a", status: "degraded", publicImpact: true, detail: "scheduled job a: last run failed" },
    ]);
    expect(c.statusWarnings[0]).toContain("boom; 2 consecutive error run(s)");
    expect(c.notes).toEqual([expect.stringContaining("x.y: HTTP 500")]);
  });

  it("overdue only past 2 × interval + grace since the last start", () => {
    const at = (idle: number) =>
      jobsCheck(
        schedule({
          a: job({ lastRun: { status: "ok", startedAt: T - idle, error: null, captureErrors: [] } as never }),
        }),
        healthClock(T),
      );
    expect(at(2 * 600 + CRON_OVERDUE_GRACE_SEC).causes).toEqual([]);
    expect(at(2 * 600 + CRON_OVERDUE_GRACE_SEC + 1).causes.map((x) => x.code)).toEqual(["cron-unhealthy:a"]);
  });
});
