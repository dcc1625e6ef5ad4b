import { causesOf, check } from "./causes.ts";
import { age, type HealthClock, isoMinute } from "./format.ts";
import type { Check, StateStoreHealth } from "./types.ts";

/**
 * The state store (API keys, status history) as this process sees it: section `stateStore` (its
 * status with `lastOkAt` / `lastFailureAt` shifted onto the clock of `timestamp`; undefined when the
 * process has none). `unavailable` sets status degraded (cause `db-unhealthy`) with a warning saying
 * what answers 503 until it is back.
 */
export function stateStoreCheck(
  status: StateStoreHealth | undefined,
  clock: HealthClock,
): Check<StateStoreHealth | undefined> {
  const store = status && {
    ...status,
    lastOkAt: clock.onClock(status.lastOkAt),
    lastFailureAt: clock.onClock(status.lastFailureAt),
  };
  if (store?.state !== "unavailable") return check(store);
  const reason = store.reason ?? "unavailable";
  const lastOk =
    store.lastOkAt === null
      ? "never"
      : `${isoMinute(store.lastOkAt)} (${age(Math.max(0, clock.now - store.lastOkAt))} before now)`;
  return check(store, {
    causes: causesOf("degraded", "db-unhealthy", `state store unavailable: ${reason}`),
    statusWarnings: [
      `state store (${store.backend ?? "unknown backend"}) unavailable (sets status degraded): ${reason}, circuit ${store.circuit}; last ok ${lastOk}. Requests that need an API key answer 503 until it is back; /api/health and other key-exempt routes still answer.`,
    ],
  });
}
