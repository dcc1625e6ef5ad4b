import pLimit from "p-limit";
import { must } from "../../lib/must.ts";

/** Circuit-breaker state recorded per upstream source in the build manifest and health (spec 2.8). */
export interface CircuitState {
  state: "closed" | "open" | "half-open";
  consecutiveFailures: number;
  /** Unix seconds of the last successful call, null when none. */
  lastSuccessAt: number | null;
}

/** Options of an upstream HTTP client. Times in milliseconds. */
export interface HttpClientOptions {
  /** Circuit name, e.g. `defillama`. */
  name: string;
  baseUrl: string;
  /** Max concurrent requests to this host (p-limit). */
  concurrency?: number;
  timeoutMs?: number;
  /** Retries after the first attempt, on network errors, 429 and 5xx. */
  retries?: number;
  /** First backoff delay; doubles per retry; `Retry-After` wins when larger. */
  backoffMs?: number;
  /** Consecutive failed calls that open the circuit. */
  failureThreshold?: number;
  /** How long an open circuit rejects calls before one trial call (half-open). */
  cooldownMs?: number;
  headers?: Record<string, string>;
  fetchImpl?: typeof fetch;
  /** Clock in ms, injectable for tests. */
  now?: () => number;
}

/** Thrown for any failed upstream call; `status` is the HTTP status when one was received. */
export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly source: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "UpstreamError";
  }
}

/**
 * A small upstream client: per-host concurrency (p-limit), per-attempt timeout
 * (`AbortSignal.timeout`), bounded retries with exponential backoff honouring `Retry-After`,
 * and a consecutive-failure circuit breaker whose state the build records.
 */
export class HttpClient {
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly opts: Required<Omit<HttpClientOptions, "headers" | "fetchImpl" | "now">> &
    Pick<HttpClientOptions, "headers">;
  private readonly fetchImpl: typeof fetch;
  private readonly now: () => number;
  private circuit: CircuitState = { state: "closed", consecutiveFailures: 0, lastSuccessAt: null };
  private openedAt = 0;

  constructor(options: HttpClientOptions) {
    this.opts = {
      concurrency: 4,
      timeoutMs: 20_000,
      retries: 3,
      backoffMs: 500,
      failureThreshold: 5,
      cooldownMs: 60_000,
      ...options,
    };
    this.fetchImpl = options.fetchImpl ?? fetch;
    this.now = options.now ?? Date.now;
    this.limit = pLimit(this.opts.concurrency);
  }

  /** Current circuit state (a copy). */
  get state(): CircuitState {
    return { ...this.circuit };
  }

  /**
   * GET `path` (relative to baseUrl) and parse JSON. Throws UpstreamError when the circuit is
   * open, after the last retry fails, or when the body is not JSON.
   */
  async getJson(path: string): Promise<unknown> {
    const text = await this.getText(path);
    try {
      return JSON.parse(text);
    } catch {
      throw new UpstreamError(`${this.opts.name}: ${path} returned a non-JSON body`, this.opts.name);
    }
  }

  /**
   * POST `body` as JSON to `path` (a GraphQL query) and parse the JSON answer; same timeout, retry,
   * circuit and failure rules as getJson.
   */
  async postJson(path: string, body: unknown): Promise<unknown> {
    const text = await this.getText(path, JSON.stringify(body));
    try {
      return JSON.parse(text);
    } catch {
      throw new UpstreamError(`${this.opts.name}: ${path} returned a non-JSON body`, this.opts.name);
    }
  }

  /** GET `path` (POST `postBody` as JSON when given) and return the body text; same failure rules as getJson. */
  async getText(path: string, postBody?: string): Promise<string> {
    if (this.circuit.state === "open") {
      if (this.now() - this.openedAt < this.opts.cooldownMs) {
        throw new UpstreamError(`${this.opts.name}: circuit open`, this.opts.name);
      }
      this.circuit.state = "half-open";
    }
    return this.limit(async () => {
      try {
        const body = await this.attempt(path, postBody);
        this.circuit = { state: "closed", consecutiveFailures: 0, lastSuccessAt: Math.floor(this.now() / 1000) };
        return body;
      } catch (err) {
        this.circuit.consecutiveFailures += 1;
        if (this.circuit.state === "half-open" || this.circuit.consecutiveFailures >= this.opts.failureThreshold) {
          this.circuit.state = "open";
          this.openedAt = this.now();
        }
        throw err;
      }
    });
  }

  private async attempt(path: string, postBody?: string): Promise<string> {
    const url = new URL(path, this.opts.baseUrl).toString();
    let lastError: UpstreamError | undefined;
    for (let attempt = 0; attempt <= this.opts.retries; attempt++) {
      let waitMs = this.opts.backoffMs * 2 ** attempt;
      try {
        const res = await this.fetchImpl(url, {
          ...(postBody === undefined ? {} : { method: "POST", body: postBody }),
          headers: {
            accept: "application/json",
            ...(postBody === undefined ? {} : { "content-type": "application/json" }),
            ...this.opts.headers,
          },
          signal: AbortSignal.timeout(this.opts.timeoutMs),
        });
        if (res.ok) return await res.text();
        lastError = new UpstreamError(`${this.opts.name}: ${path} answered ${res.status}`, this.opts.name, res.status);
        if (res.status !== 429 && res.status < 500) throw lastError;
        const retryAfter = Number(res.headers.get("retry-after"));
        if (Number.isFinite(retryAfter) && retryAfter > 0) waitMs = Math.max(waitMs, retryAfter * 1000);
      } catch (err) {
        if (err instanceof UpstreamError && err.status !== undefined && err.status !== 429 && err.status < 500)
          throw err;
        lastError =
          err instanceof UpstreamError
            ? err
            : new UpstreamError(`${this.opts.name}: ${path} failed: ${(err as Error).message}`, this.opts.name);
      }
      if (attempt < this.opts.retries) await new Promise((r) => setTimeout(r, waitMs));
    }
    throw must(lastError, "error of the last attempt");
  }
}
