import { causesOf, check } from "./causes.ts";
import { age, type HealthClock } from "./format.ts";
import type { Check, HealthOptions } from "./types.ts";

/** No published build: status stale (cause `no-build`), every data route answers 503. */
export function noBuildCheck(): Check {
  return check(undefined, {
    causes: causesOf("stale", "no-build", "no published build: every data route answers 503"),
    notes: [
      "no published build: nothing has been published yet (or latest.json is unreadable); every data route answers 503 until a build is published.",
    ],
  });
}

/**
 * The published pointer (`latest.json`) could not be followed at the last re-check
 * (PublishedStore.pointerFailure): a note (no effect on status) with the reason, how long (wall
 * clock), the build still serving (`servingBuildId`, null without one) and how to write it again.
 */
export function pointerCheck(
  failure: HealthOptions["pointerFailure"],
  servingBuildId: string | null,
  clock: HealthClock,
): Check {
  if (!failure) return check(undefined);
  const since = age(Math.max(0, Math.round(clock.wallNow - failure.sinceMs / 1000)));
  return check(undefined, {
    notes: [
      `published pointer unreadable (no effect on status): ${failure.error} for ${since}. ${servingBuildId !== null ? `Build ${servingBuildId} keeps serving; ` : ""}run \`tsx build/cli.ts restore --build <id>\` (or publish a build) to write it again.`,
    ],
  });
}
