import type { LimiterStoreHealth } from "../lib/rate-limit.ts";
import { causesOf, check } from "./causes.ts";
import { age, type HealthClock, isoMinute } from "./format.ts";
import type { Check } from "./types.ts";

/**
 * The rate limiter's store (Redis or in-process) as this process sees it: section `limiterStore`
 * (`since` shifted onto the clock of `timestamp`; undefined when the process has none).
 * `unavailable` sets status degraded (cause `limiter-unhealthy`) with a warning saying what answers
 * 503 until it is back.
 */
export function limiterStoreCheck(
  status: LimiterStoreHealth | undefined,
  clock: HealthClock,
): Check<LimiterStoreHealth | undefined> {
  const limiter = status && { ...status, since: clock.onClock(status.since) };
  if (limiter?.state !== "unavailable") return check(limiter);
  const reason = limiter.reason ?? "unavailable";
  const since =
    limiter.since === null ? "" : ` since ${isoMinute(limiter.since)} (${age(Math.max(0, clock.now - limiter.since))})`;
  return check(limiter, {
    causes: causesOf("degraded", "limiter-unhealthy", `rate limiter store unavailable: ${reason}`),
    statusWarnings: [
      `rate limiter store (${limiter.backend}) unavailable (sets status degraded): ${reason}${since}. Requests that need an API key answer 503 (Retry-After: 60) until it is back, except hot cache hits of verified keys; /api/health and other key-exempt routes still answer.`,
    ],
  });
}
