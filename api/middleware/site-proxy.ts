import type { Handler } from "hono";
import { SITE_PROXY_HEADER } from "../lib/auth.ts";
import { HttpError } from "../lib/http-error.ts";

/** Browser request headers the same-origin proxy passes on; nothing else (no key, no cookies). */
const FORWARDED = ["Accept", "Accept-Encoding", "If-None-Match", "If-Modified-Since"];

/**
 * The same-origin proxy `/_site-data/*` (spec 1, 5.7): a GET (or HEAD) from a page of an allowlisted
 * site origin — its `Origin`, or without one its `Referer`, on a host of `origins` — is answered as
 * `/api/<rest>?<query>` on the website-internal lane (`secret` sent as `X-Ballast-Site-Proxy-Secret`,
 * so no key and no quota), through `fetch` (the API app itself), with the API's status, body and
 * headers unchanged (Cache-Control, Age, Date, ETag, X-Data-*, Warning). Other methods: 405
 * `Allow: GET`; another site's page, or none, or no configured secret: 404 (not 403).
 */
export function siteDataProxy(opts: {
  origins: readonly string[];
  secret: string | undefined;
  fetch: (req: Request) => Response | Promise<Response>;
}): Handler {
  const hosts = new Set(
    opts.origins.flatMap((o) => {
      try {
        return [new URL(o).host];
      } catch {
        return [];
      }
    }),
  );
  const fromSite = (value: string | undefined) => {
    if (!value || value === "null") return undefined;
    try {
      return hosts.has(new URL(value).host);
    } catch {
      return false;
    }
  };
  return async (c) => {
    if (c.req.method !== "GET" && c.req.method !== "HEAD")
      throw new HttpError(405, "Method Not Allowed", { Allow: "GET" });
    if (!opts.secret || !(fromSite(c.req.header("Origin")) ?? fromSite(c.req.header("Referer")) ?? false))
      throw new HttpError(404, "Not found");
    const url = new URL(c.req.url);
    const headers: Record<string, string> = { [SITE_PROXY_HEADER]: opts.secret };
    for (const h of FORWARDED) {
      const v = c.req.header(h);
      if (v !== undefined) headers[h] = v;
    }
    const upstream = await opts.fetch(
      new Request(`${url.origin}/api/${url.pathname.slice("/_site-data/".length)}${url.search}`, {
        method: c.req.method,
        headers,
      }),
    );
    return new Response(upstream.body, { status: upstream.status, headers: upstream.headers });
  };
}
