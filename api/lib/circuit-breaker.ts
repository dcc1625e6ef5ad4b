/** States of a {@link CircuitBreaker}: calls pass (`closed`), fail fast (`open`), or one probe passes (`half-open`). */
export type CircuitState = "closed" | "open" | "half-open";

/** Settings of a {@link CircuitBreaker}. Times in ms. */
export interface CircuitBreakerOptions {
  /** How long the circuit stays open before one probe may pass; default 5000. */
  coolDownMs?: number;
  /** Consecutive failures of kind `other` that open the circuit; default 3. A `timeout` opens it at once. */
  failureThreshold?: number;
  /** Monotonic clock (ms); default `performance.now`. */
  now?: () => number;
}

/** Default cool-down (ms) of an open circuit before a half-open probe. */
export const DEFAULT_COOL_DOWN_MS = 5000;

/**
 * A circuit breaker in front of one dependency, so a hung dependency costs one timeout rather than
 * one per call. `closed`: every call passes. One `timeout` failure (or `failureThreshold` consecutive
 * other failures) opens it: calls fail fast for `coolDownMs`. Then it is `half-open`: exactly one
 * call (the probe) passes and the others still fail fast; the probe's success closes the circuit,
 * its failure opens it for another cool-down. Any success closes it.
 *
 * Usage: `if (!breaker.tryAcquire()) failFast(); try { await call(); breaker.success(); } catch { breaker.failure(kind); }`.
 */
export class CircuitBreaker {
  private current: CircuitState = "closed";
  private openedAt = 0;
  private failures = 0;
  private probing = false;
  private readonly coolDownMs: number;
  private readonly threshold: number;
  private readonly now: () => number;

  constructor(opts: CircuitBreakerOptions = {}) {
    this.coolDownMs = opts.coolDownMs ?? DEFAULT_COOL_DOWN_MS;
    this.threshold = opts.failureThreshold ?? 3;
    this.now = opts.now ?? (() => performance.now());
    if (!(this.coolDownMs >= 0) || !(this.threshold >= 1))
      throw new RangeError("CircuitBreaker: coolDownMs must be ≥ 0 and failureThreshold ≥ 1");
  }

  /** Current state; an open circuit whose cool-down has passed reads `half-open`. */
  get state(): CircuitState {
    if (this.current === "open" && this.now() - this.openedAt >= this.coolDownMs) return "half-open";
    return this.current;
  }

  /** Milliseconds until an open circuit lets a probe through (0 when closed or half-open). */
  retryInMs(): number {
    return this.current === "open" ? Math.max(0, this.coolDownMs - (this.now() - this.openedAt)) : 0;
  }

  /**
   * Whether a call may go to the dependency now. Closed: always. Open: no until the cool-down has
   * passed, then the first caller becomes the half-open probe (true) and others get false until its
   * outcome is reported. `force` makes the caller the probe even inside the cool-down (an explicit
   * health check), unless a probe is already in flight.
   */
  tryAcquire(force = false): boolean {
    const s = this.state;
    if (s === "closed") return true;
    if (this.probing) return false;
    if (s === "half-open" || force) {
      this.current = "half-open";
      this.probing = true;
      return true;
    }
    return false;
  }

  /** Reports a successful call: closes the circuit and resets the failure count. */
  success(): void {
    this.current = "closed";
    this.failures = 0;
    this.probing = false;
  }

  /**
   * Reports a failed call. `timeout` (the dependency hung) opens the circuit at once; `other`
   * failures open it after `failureThreshold` in a row. A failed half-open probe reopens it.
   */
  failure(kind: "timeout" | "other"): void {
    const wasProbe = this.probing;
    this.probing = false;
    this.failures++;
    if (wasProbe || this.current !== "closed" || kind === "timeout" || this.failures >= this.threshold) {
      this.current = "open";
      this.openedAt = this.now();
    }
  }
}
