import type { MiddlewareHandler } from "hono";
import { SITE_PROXY_HEADER } from "../lib/auth.ts";
import type { ProxyTrust } from "../lib/client-address.ts";
import { MIN_COMPRESS_BYTES, negotiate } from "../lib/encoding.ts";
import { HttpError } from "../lib/http-error.ts";
import type { StaticRoute, WriteRoute } from "../routes/route.ts";
import type { Cors } from "./cors.ts";
import { bodyReader } from "./json-route.ts";
import { authRequest } from "./lane.ts";
import type { ValidateDeps } from "./validate.ts";
import { serviceNow } from "../lib/clock.ts";

/** Cache-Control of a static file whose route names no profile. */
const STATIC_CACHE = "public, max-age=300";

/**
 * The handler step of a static file route (after lane and validate): the handler's file with
 * `Access-Control-Allow-Origin: *`, its Cache-Control (default `public, max-age=300`),
 * `Vary: Accept-Encoding`, and br/gzip by `Accept-Encoding` when the route can encode it and it has
 * at least MIN_COMPRESS_BYTES. 404 when the handler finds nothing.
 */
export function serveStatic(route: StaticRoute): MiddlewareHandler {
  return async (c) => {
    const found = await route.handler(c.get("input").ctx);
    if (!found) throw new HttpError(404, "Not found");
    const headers: Record<string, string> = {
      ...found.headers,
      "Content-Type": found.contentType,
      "Access-Control-Allow-Origin": "*",
      "Cache-Control": found.cacheControl ?? STATIC_CACHE,
      Vary: "Accept-Encoding",
    };
    const coding =
      found.encoded && found.bytes.byteLength >= MIN_COMPRESS_BYTES
        ? negotiate(c.req.header("Accept-Encoding"))
        : "identity";
    const encoded = coding === "identity" || !found.encoded ? null : await found.encoded(coding);
    if (encoded) headers["Content-Encoding"] = coding;
    return new Response((encoded ?? found.bytes) as Uint8Array<ArrayBuffer>, { status: 200, headers });
  };
}

/**
 * The handler step of a write route (spec 4.4; after the lane step): the handler with the client IP,
 * the request's headers and its size-capped body reader; its status with JSON (or plain text), CORS
 * and always `Cache-Control: no-store`.
 */
export function serveWrite(
  route: WriteRoute,
  deps: ValidateDeps & { cors: Cors; trust: ProxyTrust },
): MiddlewareHandler {
  const base = { store: deps.store, services: deps.services };
  return async (c) => {
    const req = authRequest(c, false, deps.trust);
    const build = await deps.store.build();
    const clock = serviceNow(build, deps.clockMode, deps.nowMs());
    const result = await route.handler({
      ...base,
      build,
      now: clock.now,
      clock: clock.clock,
      wallNow: clock.wallNow,
      ip: req.ip,
      header: req.header,
      readBody: bodyReader(c),
      viaSiteLane: c.req.header(SITE_PROXY_HEADER) !== undefined,
    });
    const headers: Record<string, string> = {
      ...deps.cors.headers(c.req.header("Origin")),
      ...result.headers,
      "Cache-Control": "no-store",
    };
    if (result.text !== undefined)
      return new Response(result.text, {
        status: result.status,
        headers: { ...headers, "Content-Type": "text/plain; charset=utf-8" },
      });
    return new Response(JSON.stringify(result.json ?? {}), {
      status: result.status,
      headers: { ...headers, "Content-Type": "application/json; charset=utf-8" },
    });
  };
}
