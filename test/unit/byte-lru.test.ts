import { describe, expect, it } from "vitest";
import { ByteLru } from "../../api/lib/byte-lru.ts";

describe("ByteLru: least recently used out first, under a byte budget", () => {
  it("drops the least recently used entries once the budget is spent; a hit keeps an entry", () => {
    const lru = new ByteLru<string, number>(300);
    lru.set("a", 1, 100);
    lru.set("b", 2, 100);
    lru.set("c", 3, 100);
    expect(lru.get("a")).toBe(1); // a is now the most recently used
    lru.set("d", 4, 100);
    expect(lru.has("b")).toBe(false);
    expect(lru.get("a")).toBe(1);
    expect(lru.stats()).toEqual({ bytes: 300, entries: 3 });
  });

  it("keeps nothing above the whole budget, and replacing a key releases its bytes", () => {
    const lru = new ByteLru<string, string>(100);
    expect(lru.set("big", "x", 101)).toBe(false);
    expect(lru.has("big")).toBe(false);
    lru.set("k", "v1", 60);
    lru.set("k", "v2", 30);
    expect(lru.stats()).toEqual({ bytes: 30, entries: 1 });
  });

  it("charges a size known later to the value it was given for, and may drop it then", () => {
    const lru = new ByteLru<string, object>(100);
    const pending = {};
    lru.set("f", pending, 0);
    lru.set("g", {}, 50);
    lru.resize("f", {}, 80); // another value: ignored
    expect(lru.stats().bytes).toBe(50);
    lru.resize("f", pending, 80); // f is kept, the older g goes
    expect(lru.has("f")).toBe(true);
    expect(lru.has("g")).toBe(false);
    lru.resize("f", pending, 101);
    expect(lru.stats()).toEqual({ bytes: 0, entries: 0 });
  });

  it("deletes only the value it is given, and bounds entries when asked to", () => {
    const lru = new ByteLru<string, object>(0, 2);
    const a = {};
    lru.set("a", a, 0);
    lru.delete("a", {});
    expect(lru.has("a")).toBe(true);
    lru.delete("a", a);
    expect(lru.has("a")).toBe(false);
    lru.set("x", {}, 0);
    lru.set("y", {}, 0);
    lru.set("z", {}, 0);
    expect(lru.stats().entries).toBe(2);
    expect(lru.has("x")).toBe(false);
  });
});
