import type { MiddlewareHandler } from "hono";

/** Methods and request headers a browser may use on the API (preflight answers). */
export const CORS_METHODS = "GET, HEAD, POST, OPTIONS";
export const CORS_ALLOW_HEADERS = "Content-Type, Idempotency-Key, X-API-Key";
/** Response headers a browser script may read: freshness (spec 2.17, 8) and Retry-After. */
export const CORS_EXPOSE_HEADERS =
  "X-Data-Age, X-Data-Updated-At, X-Data-Freshness, X-Data-Freshness-Reason, Warning, Retry-After";

/** Static files (`/datasets/…`, `/openapi.json`, …): any origin may read them (spec 1). */
export const isStaticPath = (path: string) => !path.startsWith("/api/");

/**
 * CORS of the public listener (spec 1 rule 2): a request Origin on the allowlist is echoed with
 * `Vary: Origin`, a foreign one gets no `Access-Control-Allow-Origin`, a request without Origin gets
 * the first allowlisted origin. Header objects are decided once per Origin value (at most 1024 kept)
 * and spread into plain objects by the response writer: building undici Headers per request costs a
 * large share of the small route's time.
 */
export class Cors {
  private readonly byOrigin = new Map<string, Record<string, string>>();

  constructor(private readonly origins: readonly string[]) {}

  /** The allowlisted origin to echo for `origin` (the first one when absent), or undefined for a foreign one. */
  allowed(origin: string | undefined): string | undefined {
    return !origin ? this.origins[0] : this.origins.includes(origin) ? origin : undefined;
  }

  /** CORS response headers of an API response to a request from `origin` (shared object: do not mutate). */
  headers(origin: string | undefined): Record<string, string> {
    const k = origin ?? "";
    let h = this.byOrigin.get(k);
    if (!h) {
      const allowed = this.allowed(origin);
      h = {
        ...(allowed ? { "Access-Control-Allow-Origin": allowed } : {}),
        Vary: "Origin, Accept-Encoding",
        "Access-Control-Expose-Headers": CORS_EXPOSE_HEADERS,
      };
      if (this.byOrigin.size >= 1024) this.byOrigin.clear();
      this.byOrigin.set(k, h);
    }
    return h;
  }

  /**
   * Preflight handler (`OPTIONS *`): 204 with `Access-Control-Allow-Origin: *` for static files; for
   * API paths 204 for an allowlisted (or absent) Origin and 403 for a foreign one; no body nor
   * `Content-Type` either way (spec 1: CORS preflights have none).
   */
  preflight(): MiddlewareHandler {
    return async (c) => {
      if (isStaticPath(c.req.path)) {
        return c.body(null, 204, {
          "Access-Control-Allow-Origin": "*",
          "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
          "Access-Control-Max-Age": "86400",
        });
      }
      const origin = c.req.header("Origin");
      const allowed = this.allowed(origin);
      // Refused: 403 without a body or content type, like every preflight answer (spec 1 rule 1).
      if (origin && !allowed) return c.body(null, 403, { Vary: "Origin" });
      return c.body(null, 204, {
        ...(allowed ? { "Access-Control-Allow-Origin": allowed } : {}),
        Vary: "Origin",
        "Access-Control-Allow-Methods": CORS_METHODS,
        "Access-Control-Allow-Headers": CORS_ALLOW_HEADERS,
        "Access-Control-Max-Age": "86400",
      });
    };
  }
}
