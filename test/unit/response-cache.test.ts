import { describe, expect, it } from "vitest";
import { negotiate } from "../../api/lib/encoding.ts";
import { type CachedResponse, ResponseCache } from "../../api/lib/response-cache.ts";

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
    expect(cache.stats()).toEqual({ bytes: 0, entries: 0 });
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
