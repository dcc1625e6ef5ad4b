import { describe, expect, it, vi } from "vitest";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { buildRecorded } from "../helpers/build-once.ts";

describe("PublishedStore.current() starts a due re-check of latest.json itself", () => {
  it("a process answered only from current() (the Node fast path) keeps following the pointer", async () => {
    const { dir } = await buildRecorded("ballast-recheck-");
    const read = fsReader(dir);
    let pointerReads = 0;
    let clockMs = 1_000_000;
    const store = new PublishedStore(
      async (key) => {
        if (key === "latest.json") pointerReads++;
        return read(key);
      },
      1000,
      () => clockMs,
    );
    const serving = await store.build();
    expect(serving).not.toBeNull();
    expect(pointerReads).toBe(1);
    expect(store.current()).toBe(serving);
    clockMs += 1000;
    // Due: this caller is sent the waiting way, and the re-check is already under way (no build() call).
    expect(store.current()).toBeNull();
    expect(pointerReads).toBe(2);
    await vi.waitFor(() => expect(store.current()).toBe(serving));
    // Once per refresh interval, not once per call.
    for (let i = 0; i < 5; i++) store.current();
    expect(pointerReads).toBe(2);
  });
});
