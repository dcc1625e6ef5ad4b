import { describe, expect, it } from "vitest";
import { healthClock } from "./format.ts";
import { limiterStoreCheck } from "./limiter-store.ts";

describe("rate limiter store check", () => {
  it("an ok limiter store is echoed; `since` shifted onto the clock of `timestamp`", () => {
    const c = limiterStoreCheck({ state: "ok", backend: "redis", since: 500, reason: null }, healthClock(100, 600));
    expect(c.section).toEqual({ state: "ok", backend: "redis", since: 0, reason: null });
    expect(c.causes).toEqual([]);
  });

  it("unavailable: degraded (cause limiter-unhealthy) and a warning with since when", () => {
    const c = limiterStoreCheck(
      { state: "unavailable", backend: "redis", since: 0, reason: "connection refused" },
      healthClock(300),
    );
    expect(c.causes).toEqual([
      {
        code: "limiter-unhealthy",
        status: "degraded",
        publicImpact: true,
        detail: "rate limiter store unavailable: connection refused",
      },
    ]);
    expect(c.statusWarnings[0]).toContain(
      "rate limiter store (redis) unavailable (sets status degraded): connection refused since 1970-01-01T00:00Z (5 min)",
    );
  });
});
