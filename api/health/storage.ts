import { check } from "./causes.ts";
import { age, type HealthClock } from "./format.ts";
import type { Check, HealthOptions } from "./types.ts";

/**
 * Published storage (filesystem or S3) failing to answer the last re-check of `latest.json`
 * (PublishedStore.storageFailure): a note (no effect on status) with the reason and how long
 * (wall clock), and what still serves (`serving`: whether a build is in memory).
 */
export function storageCheck(failure: HealthOptions["storageFailure"], serving: boolean, clock: HealthClock): Check {
  if (!failure) return check(undefined);
  const since = age(Math.max(0, Math.round(clock.wallNow - failure.sinceMs / 1000)));
  return check(undefined, {
    notes: [
      `published storage unreadable (no effect on status): ${failure.error} for ${since}. ${serving ? "The build in memory keeps serving; files not yet read answer 503 and a newer build is picked up once the store answers." : "Nothing can be served until the store answers."}`,
    ],
  });
}

/**
 * Stored objects outside builds (dated snapshots, digests, their indexes) whose last read failed
 * their schema: a note (no effect on status) naming them and how to restore them.
 */
export function corruptStoredCheck(keys: readonly string[] | undefined): Check {
  if (!keys?.length) return check(undefined);
  return check(undefined, {
    notes: [
      `stored dated payloads fail their schema (no effect on status): ${keys.join(", ")}. The routes serving them answer 500 and never a partial body; restore the file (a snapshot day: delete it and run \`make backfill\` for that day, which rebuilds the same bytes from the recorded inputs).`,
    ],
  });
}
