/**
 * An expected HTTP failure rendered by the app's one `onError` as `{ "error": message, ...extra }`
 * (spec 7; `extra` carries e.g. a donor claim's `reason`).
 */
export class HttpError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 413 | 429 | 500 | 502 | 503,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/** 503 for a payload that was never published or failed its contract (spec 7 rule 3). */
export const notYetAvailable = (what: string) =>
  new HttpError(503, `Data not yet available: ${what}`, { "Retry-After": "60" });
