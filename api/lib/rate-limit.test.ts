import { afterEach, describe, expect, it, vi } from "vitest";
import { KeyRateLimiter } from "./rate-limit.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("in-process limiter: fixed windows from a bucket's first point", () => {
  it("admits the budget, refuses the next points until the window closes, then opens a new one", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const limiter = new KeyRateLimiter();
    for (let i = 0; i < 3; i++) expect(limiter.consumeSync("k", 3)).toEqual({ ok: true });
    vi.advanceTimersByTime(20_500);
    expect(limiter.consumeSync("k", 3)).toEqual({ ok: false, retryAfterSec: 40 });
    expect(await limiter.consume("k", 3)).toEqual({ ok: false, retryAfterSec: 40 });
    expect(await limiter.peek("k", 3)).toEqual({ ok: false, retryAfterSec: 40 });
    // other buckets and other budgets are counted apart
    expect(limiter.consumeSync("other", 3)).toEqual({ ok: true });
    expect(limiter.consumeSync("k", 5)).toEqual({ ok: true });
    vi.advanceTimersByTime(39_500);
    expect(await limiter.peek("k", 3)).toEqual({ ok: true });
    expect(limiter.consumeSync("k", 3)).toEqual({ ok: true });
  });

  it("honours a window other than 60 s and rejects budgets that are not positive integers", () => {
    vi.useFakeTimers({ now: 5_000 });
    const limiter = new KeyRateLimiter();
    expect(limiter.consumeSync("f", 1, 600)).toEqual({ ok: true });
    expect(limiter.consumeSync("f", 1, 600)).toEqual({ ok: false, retryAfterSec: 600 });
    expect(() => limiter.consumeSync("f", 0)).toThrow(RangeError);
    expect(() => limiter.consumeSync("f", 1.5)).toThrow(RangeError);
  });

  it("answers nothing synchronously when budgets are shared through Redis", () => {
    const limiter = new KeyRateLimiter({});
    expect(limiter.shared).toBe(true);
    expect(limiter.consumeSync("k", 3)).toBeUndefined();
  });
});
