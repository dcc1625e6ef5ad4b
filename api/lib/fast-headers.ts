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

/** The names the fast path reads (lower case) and the field each goes to; matched by length first. */
const NAMES: ReadonlyArray<readonly [string, keyof FastPathHeaders]> = [
  ["accept-encoding", "acceptEncoding"],
  ["if-none-match", "ifNoneMatch"],
  ["origin", "origin"],
  ["x-ballast-site-proxy-secret", "siteProxySecret"],
  ["x-api-key", "apiKey"],
];
/** Fields by name length (every name above has a length of its own). */
const BY_LENGTH: (readonly [string, keyof FastPathHeaders] | undefined)[] = [];
for (const n of NAMES) BY_LENGTH[n[0].length] = n;

/**
 * Whether `name` is `lower` (a lower-case ASCII header name of the same length) in any letter case.
 * Compares char codes: no lower-cased copy of every header name of every request.
 */
function sameName(name: string, lower: string): boolean {
  for (let i = 0; i < lower.length; i++) {
    const c = name.charCodeAt(i);
    if (c !== lower.charCodeAt(i) && (c < 65 || c > 90 || c + 32 !== lower.charCodeAt(i))) return false;
  }
  return true;
}

/**
 * The fast path's headers of `raw` (names matched case-insensitively), or null when one of them is
 * sent more than once (Node would join the values; the caller leaves such a request to the app).
 */
export function fastPathHeaders(raw: string[]): FastPathHeaders | null {
  // Every field present from the start: one hidden class for every request's headers, whichever it sends.
  const out: FastPathHeaders = {
    acceptEncoding: undefined,
    ifNoneMatch: undefined,
    origin: undefined,
    siteProxySecret: undefined,
    apiKey: undefined,
  };
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    const known = BY_LENGTH[name.length];
    if (known === undefined || !sameName(name, known[0])) continue;
    const field = known[1];
    if (out[field] !== undefined) return null;
    out[field] = raw[i + 1];
  }
  return out;
}
