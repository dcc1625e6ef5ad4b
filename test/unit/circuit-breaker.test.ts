import { describe, expect, it } from "vitest";
import { CircuitBreaker } from "../../api/lib/circuit-breaker.ts";
import { dependencyReason } from "../../api/lib/dependency-reason.ts";
import { StateStoreUnavailableError } from "../../api/lib/key-store.ts";

describe("CircuitBreaker", () => {
  const clocked = (opts: { coolDownMs?: number; failureThreshold?: number } = {}) => {
    let t = 0;
    const b = new CircuitBreaker({ coolDownMs: 1000, ...opts, now: () => t });
    return {
      b,
      advance: (ms: number) => {
        t += ms;
      },
    };
  };

  it("one timeout opens it: calls fail fast for the cool-down, then exactly one half-open probe passes", () => {
    const { b, advance } = clocked();
    expect(b.tryAcquire()).toBe(true);
    b.failure("timeout");
    expect(b.state).toBe("open");
    expect(b.tryAcquire()).toBe(false);
    advance(999);
    expect(b.tryAcquire()).toBe(false);
    expect(b.retryInMs()).toBe(1);
    advance(1);
    expect(b.state).toBe("half-open");
    expect(b.tryAcquire()).toBe(true); // the probe
    expect(b.tryAcquire()).toBe(false); // others still fail fast while it runs
    b.success();
    expect(b.state).toBe("closed");
    expect(b.tryAcquire()).toBe(true);
  });

  it("a failed probe reopens it for another cool-down", () => {
    const { b, advance } = clocked();
    b.failure("timeout");
    advance(1000);
    expect(b.tryAcquire()).toBe(true);
    b.failure("other");
    expect(b.state).toBe("open");
    advance(500);
    expect(b.tryAcquire()).toBe(false);
    advance(500);
    expect(b.tryAcquire()).toBe(true);
  });

  it("other failures open it only after the threshold in a row; a success resets the count", () => {
    const { b } = clocked({ failureThreshold: 3 });
    b.failure("other");
    b.failure("other");
    b.success();
    b.failure("other");
    b.failure("other");
    expect(b.state).toBe("closed");
    b.failure("other");
    expect(b.state).toBe("open");
  });

  it("a forced probe (explicit health check) passes inside the cool-down, one at a time", () => {
    const { b } = clocked();
    b.failure("timeout");
    expect(b.tryAcquire(true)).toBe(true);
    expect(b.tryAcquire(true)).toBe(false);
    b.success();
    expect(b.state).toBe("closed");
  });
});

describe("dependencyReason: generic words, never driver text", () => {
  it.each([
    [Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }), "connection refused"],
    [new Error("Query read timeout"), "timeout"],
    [new Error("timeout exceeded when trying to connect"), "timeout"],
    [Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" }), "timeout"],
    [
      Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
      "connection lost",
    ],
    [new Error("Connection terminated unexpectedly"), "connection lost"],
    [Object.assign(new Error("getaddrinfo ENOTFOUND db.internal"), { code: "ENOTFOUND" }), "host not found"],
    [
      Object.assign(new Error('password authentication failed for user "ballast"'), { code: "28P01" }),
      "authentication failed",
    ],
    [Object.assign(new Error('relation "api_keys" does not exist'), { code: "42P01" }), "query failed"],
    [new Error("something odd"), "unavailable"],
  ])("%s → %s", (err, reason) => {
    expect(dependencyReason(err)).toBe(reason);
    // The wrapper the key store throws keeps the generic reason of its cause.
    expect(
      new StateStoreUnavailableError(`state store: verify failed: ${(err as Error).message}`, { cause: err }).reason,
    ).toBe(reason);
  });
});
