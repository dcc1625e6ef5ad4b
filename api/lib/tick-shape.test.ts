import { createHook } from "node:async_hooks";
import { describe, expect, it } from "vitest";
import { keepTickShapeAlive, keptTickObject } from "./tick-shape.ts";

/** A TickObject made by `process.nextTick` now (captured with a hook of the test's own). */
function freshTick(): object {
  let tick: object | undefined;
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type === "TickObject") tick = resource;
    },
  }).enable();
  process.nextTick(() => {});
  hook.disable();
  if (!tick) throw new Error("process.nextTick made no TickObject");
  return tick;
}

/**
 * Own keys of `o`: symbols by description, then string keys; without `kResourceStore`, which an
 * AsyncLocalStorage that another test file of this worker enabled adds to every resource made after.
 */
const keysOf = (o: object) =>
  [...Object.getOwnPropertySymbols(o).map((s) => s.description), ...Object.keys(o)].filter(
    (k) => k !== "kResourceStore",
  );

describe("keepTickShapeAlive", () => {
  it("keeps one nextTick queue entry, with the keys every entry has, and the same one when called again", () => {
    // Other test files in this worker may have started a server (which calls it) already.
    keepTickShapeAlive();
    const kept = keptTickObject();
    expect(kept).toBeDefined();
    expect(keysOf(kept as object)).toEqual(keysOf(freshTick()));
    expect(keysOf(kept as object)).toContain("callback");
    keepTickShapeAlive();
    expect(keptTickObject()).toBe(kept);
  });
});
