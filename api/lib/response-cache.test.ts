import { describe, expect, it } from "vitest";
import { negotiate } from "./encoding.ts";
import { type CachedResponse, ResponseCache } from "./response-cache.ts";

const entry = (bytes: number): CachedResponse => ({
  buildId: "b",
  nowSec: 0,
  timeDependent: false,
  dataAsOf: null,
  headers: {},
  bodies: { identity: new Uint8Array(bytes) },
});

describe("response cache: one byte budget for the whole process", () => {
  it("evicts the oldest entries once the budget is spent and never exceeds it", () => {
    const cache = new ResponseCache(100_000);
    for (let i = 0; i < 50; i++) cache.set(`k${i}`, entry(10_000));
    const { bytes, entries } = cache.stats();
    expect(bytes).toBeLessThanOrEqual(100_000);
    expect(entries).toBe(9);
    expect(cache.get("k0")).toBeUndefined();
    expect(cache.get("k49")).toBeDefined();
  });

  it("counts compressed bodies added later and refuses entries above an eighth of the budget", () => {
    const cache = new ResponseCache(80_000);
    const e = entry(1000);
    cache.set("a", e);
    const before = cache.stats().bytes;
    cache.addBody("a", e, "br", new Uint8Array(300));
    expect(cache.stats().bytes).toBe(before + 300);
    cache.delete("a");
    expect(cache.stats()).toEqual({ bytes: 0, entries: 0, urls: 0 });
    cache.set("big", entry(10_001));
    expect(cache.get("big")).toBeUndefined();
  });

  it("replacing a key releases the old entry's bytes", () => {
    const cache = new ResponseCache(1_000_000);
    cache.set("a", entry(5000));
    cache.set("a", entry(7000));
    expect(cache.stats().entries).toBe(1);
    expect(cache.stats().bytes).toBeLessThan(7000 + 1024);
  });
});

describe("content coding negotiation", () => {
  it("prefers br, then gzip; honours q=0; identity otherwise", () => {
    expect(negotiate("br, gzip")).toBe("br");
    expect(negotiate("gzip, deflate")).toBe("gzip");
    expect(negotiate("gzip;q=1.0, br;q=0")).toBe("gzip");
    expect(negotiate("br;q=0, gzip;q=0")).toBe("identity");
    expect(negotiate("deflate")).toBe("identity");
    expect(negotiate(undefined)).toBe("identity");
    expect(negotiate("BR")).toBe("br");
  });
});

describe("response cache: admission and the URLs of the Node fast path", () => {
  it("admits a key from its second request, and always when it is stored", () => {
    const cache = new ResponseCache(1_000_000);
    expect(cache.admit("k")).toBe(false);
    expect(cache.admit("k")).toBe(true);
    cache.set("k", entry(10));
    expect(cache.admit("k")).toBe(true);
    // one-off keys are never admitted
    for (let i = 0; i < 1000; i++) expect(cache.admit(`once-${i}`)).toBe(false);
  });

  it("charges known URLs to the budget, keeps them across a replacement and drops them with the entry", () => {
    const cache = new ResponseCache<string>(1_000_000);
    cache.set("k", entry(100));
    const before = cache.stats().bytes;
    cache.alias("/api/x?a=1", "k", "route-x");
    cache.alias("/api/x?a=1", "k", "route-x");
    expect(cache.stats()).toEqual({ bytes: before + "/api/x?a=1".length + 64, entries: 1, urls: 1 });
    expect(cache.lookup("/api/x?a=1")).toMatchObject({ key: "k", tag: "route-x" });
    cache.alias("/api/unknown", "nope", "r");
    expect(cache.lookup("/api/unknown")).toBeUndefined();
    const fresh = entry(200);
    cache.set("k", fresh);
    expect(cache.lookup("/api/x?a=1")?.entry).toBe(fresh);
    cache.delete("k");
    expect(cache.lookup("/api/x?a=1")).toBeUndefined();
    expect(cache.stats()).toEqual({ bytes: 0, entries: 0, urls: 0 });
  });

  it("moves a URL answered by another key to that key's entry; the first key's removal leaves it", () => {
    const cache = new ResponseCache<string>(1_000_000);
    const first = entry(100);
    const second = entry(100);
    cache.set("k1", first);
    cache.set("k2", second);
    cache.alias("/api/x", "k1", "r1");
    cache.alias("/api/x", "k2", "r2");
    expect(cache.lookup("/api/x")).toEqual({ key: "k2", entry: second, tag: "r2" });
    cache.delete("k1");
    expect(cache.lookup("/api/x")?.entry).toBe(second);
    expect(cache.stats().urls).toBe(1);
  });

  it("evicts entries, with their URLs, when URLs push it past the budget", () => {
    const cache = new ResponseCache<number>(20_000);
    cache.set("a", entry(1000));
    cache.set("b", entry(1000));
    for (let i = 0; cache.get("a"); i++) cache.alias(`/api/b?n=${i}`, "b", i);
    expect(cache.stats().bytes).toBeLessThanOrEqual(20_000);
    expect(cache.get("b")).toBeDefined();
    expect(cache.lookup("/api/b?n=0")?.tag).toBe(0);
  });
});
