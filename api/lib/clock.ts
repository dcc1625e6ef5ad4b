import type { ServingBuild } from "./published.ts";

/** Clock mode of the API (`CLOCK`): `auto` runs the replay clock for builds made from recorded captures, the wall clock otherwise. */
export type ClockMode = "auto" | "wall" | "replay";

/**
 * Current time (Unix s) for a build under the clock mode: replay = build as-of + time since first
 * seen; `wallNow` is the wall clock (Unix s) of the same instant `nowMs`.
 */
export function serviceNow(
  build: ServingBuild | null,
  mode: ClockMode,
  nowMs: number,
): { now: number; clock: "replay" | "wall"; wallNow: number } {
  const wallNow = Math.floor(nowMs / 1000);
  const replay = replays(build, mode);
  return { now: replay ? serviceSecond(build, mode, nowMs) : wallNow, clock: replay ? "replay" : "wall", wallNow };
}

const replays = (build: ServingBuild | null, mode: ClockMode): build is ServingBuild =>
  build !== null && mode !== "wall" && (mode === "replay" || build.manifest.clock === "replay");

/** `serviceNow(...).now` without the object (Unix s): the Node fast path asks it on every request. */
export function serviceSecond(build: ServingBuild | null, mode: ClockMode, nowMs: number): number {
  return replays(build, mode)
    ? build.manifest.asOf + Math.floor((nowMs - build.firstSeenMs) / 1000)
    : Math.floor(nowMs / 1000);
}
