/**
 * The request headers the Node fast path reads, found in `IncomingMessage.rawHeaders` (name, value,
 * name, value, …) in one pass: reading `req.headers` instead makes Node build an object of every
 * header of every request, a measurable share of a cached answer's cost.
 */
export interface FastPathHeaders {
  acceptEncoding?: string;
  ifNoneMatch?: string;
  origin?: string;
  /** `X-Ballast-Site-Proxy-Secret` (the website-internal lane). */
  siteProxySecret?: string;
  apiKey?: string;
}

const NAMES: Record<string, keyof FastPathHeaders> = {
  "accept-encoding": "acceptEncoding",
  "if-none-match": "ifNoneMatch",
  origin: "origin",
  "x-ballast-site-proxy-secret": "siteProxySecret",
  "x-api-key": "apiKey",
};
const LENGTHS = new Set(Object.keys(NAMES).map((n) => n.length));

/**
 * The fast path's headers of `raw` (names matched case-insensitively), or null when one of them is
 * sent more than once (Node would join the values; the caller leaves such a request to the app).
 */
export function fastPathHeaders(raw: string[]): FastPathHeaders | null {
  const out: FastPathHeaders = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (!LENGTHS.has(name.length)) continue;
    const field = NAMES[name.toLowerCase()];
    if (field === undefined) continue;
    if (out[field] !== undefined) return null;
    out[field] = raw[i + 1];
  }
  return out;
}
