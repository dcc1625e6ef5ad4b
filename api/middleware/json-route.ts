import type { Context, MiddlewareHandler } from "hono";
import { Readable } from "node:stream";
import type { z } from "zod";
import type { serviceNow } from "../lib/clock.ts";
import {
  assessFreshness,
  CACHE_PROFILES,
  type CacheProfile,
  freshnessHeaders,
  GENERIC_RATIOS,
  metaBlock,
} from "../lib/freshness.ts";
import { BodyTooLargeError, readBodyLimited } from "../lib/body-reader.ts";
import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import type { ServingBuild } from "../lib/published.ts";
import type { CachedResponse } from "../lib/response-cache.ts";
import {
  type HandlerContext,
  type JsonRoute,
  type RouteDecl,
  type RouteResult,
  need,
  serveArtifact,
} from "../routes/route.ts";
import { must } from "../../lib/must.ts";

/**
 * One JSON or static route's request and answer, shared by the app's routes: the cache key of a
 * request, its validated handler context (400 naming the parameter), the size-capped body reader,
 * the freshness of an answer, the cached answer of a handler and the handler step of a JSON route.
 */

const JSON_TYPE = "application/json; charset=utf-8";
const NO_STORE = { "Cache-Control": "no-store" };

/** `Invalid parameter <name>: <what it accepts>` (spec 7: a 400 names the parameter). */
export function validationMessage(where: string, err: z.ZodError): string {
  const issue = err.issues[0];
  const name = issue?.path.length ? String(issue.path[0]) : where;
  return `Invalid parameter ${name}: ${issue?.message ?? "invalid"}`;
}

/** Cache key of a request: route, raw path parameters and raw query pairs in name order. */
export function requestKey(c: Context, route: RouteDecl) {
  const params = c.req.param() as Record<string, string>;
  const query = c.req.query();
  const names = Object.keys(query);
  if (names.length > 1) names.sort();
  let key = route.operationId;
  for (const v of Object.values(params)) key += `/${v}`;
  for (const k of names) key += `&${k}=${query[k]}`;
  return { key, params, query, names };
}

/**
 * A request's body reader (HandlerContext.readBody): 413 past `maxBytes`, by `Content-Length` or by the
 * bytes that arrive; it reads the Node request stream (else the Request body) and stops at the cap,
 * so an oversized body is never buffered whole and is answered while it is still arriving.
 */
export function bodyReader(c: Context): NonNullable<HandlerContext["readBody"]> {
  return async (maxBytes, extra = {}) => {
    const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
    const declared = c.req.header("Content-Length");
    try {
      return await readBodyLimited(
        incoming instanceof Readable ? incoming : c.req.raw.body,
        maxBytes,
        declared === undefined ? undefined : Number(declared),
      );
    } catch (err) {
      if (err instanceof BodyTooLargeError) throw new HttpError(413, err.message, {}, extra);
      throw err;
    }
  };
}

/**
 * Validates a request's parameters into a handler context (`base`: the store and services).
 * @throws HttpError 400 naming the first bad or unknown parameter.
 */
export function validatedContext(
  route: RouteDecl,
  raw: ReturnType<typeof requestKey>,
  build: ServingBuild | null,
  clock: ReturnType<typeof serviceNow>,
  base: Pick<HandlerContext, "store" | "services">,
): HandlerContext {
  let params = raw.params;
  if (route.params) {
    const r = route.params.safeParse(params);
    if (!r.success) throw new HttpError(400, validationMessage("path", r.error));
    params = r.data as Record<string, string>;
  }
  const known = route.query?.shape ?? {};
  for (const k of raw.names)
    if (!Object.hasOwn(known, k)) throw new HttpError(400, `Invalid parameter ${k}: unknown parameter`);
  let query: Record<string, unknown> = {};
  if (route.query) {
    const r = route.query.safeParse(raw.query);
    if (!r.success) throw new HttpError(400, validationMessage("query", r.error));
    query = r.data as Record<string, unknown>;
  }
  return { ...base, build, now: clock.now, clock: clock.clock, wallNow: clock.wallNow, params, query };
}

/** Freshness status and headers of a response; `profile` overrides the route's cache profile (RouteResult.cacheProfile). */
export function freshness(route: JsonRoute, now: number, dataAsOf: number | null, profile: CacheProfile = route.cache) {
  const maxAgeSec = route.artifact?.maxAgeSec ?? route.maxAgeSec;
  if (maxAgeSec === undefined) return { status: null, f: null, headers: { "Cache-Control": CACHE_PROFILES[profile] } };
  const f = assessFreshness(now, dataAsOf, maxAgeSec, route.ratios ?? GENERIC_RATIOS);
  return { status: f.status, f, headers: freshnessHeaders(f, profile) };
}

/**
 * The cached answer of a JSON route's handler (or its artifact file): body with `_meta` merged on
 * routes that carry it, the stale substitute when stale, freshness and Cache-Control headers, ETag.
 * @throws HttpError what the handler throws; 503 for a route whose data is not yet available.
 */
export async function respond(route: JsonRoute, ctx: HandlerContext): Promise<CachedResponse> {
  // A not-yet-available route answers 503 unless its handler checks something first (404 for an unknown id).
  if (route.notYetAvailable && !route.handler) throw notYetAvailable(route.notYetAvailable);
  const result: RouteResult = route.handler ? await route.handler(ctx, route) : await serveArtifact(route, ctx);
  const fr = freshness(route, ctx.now, result.dataAsOf, result.cacheProfile);
  const stale = fr.status === "stale";
  let body: Uint8Array;
  let file: string | undefined;
  let stablePrefixBytes: number | undefined;
  if (result.file && !route.meta) {
    body = must(await need(ctx.build).file(result.file), `published file ${result.file}`);
    file = result.file;
  } else if (result.bytes && !route.meta && !(stale && result.whenStale !== undefined)) {
    body = result.bytes;
  } else {
    let text =
      stale && result.whenStale !== undefined
        ? JSON.stringify(result.whenStale)
        : result.file
          ? Buffer.from(must(await need(ctx.build).file(result.file), `published file ${result.file}`))
              .toString("utf8")
              .trimEnd()
          : (result.json ??
            (result.bytes ? Buffer.from(result.bytes).toString("utf8") : JSON.stringify(result.payload)));
    if (route.meta && fr.f && text.endsWith("}")) {
      const meta: Record<string, unknown> = { ...metaBlock(fr.f), ...(result.meta ?? {}) };
      if ("degraded" in meta) {
        meta.degraded = meta.degraded === true || stale;
        meta.freshness = fr.status;
      }
      const stable = text.slice(0, -1);
      stablePrefixBytes = Buffer.byteLength(stable);
      text = `${stable},"_meta":${JSON.stringify(meta)}}`;
    }
    body = Buffer.from(text);
  }
  return {
    buildId: ctx.build?.id ?? null,
    nowSec: ctx.now,
    timeDependent: route.meta,
    dataAsOf: result.dataAsOf,
    file,
    noStore: result.noStore,
    cacheProfile: result.cacheProfile,
    headers: {
      ...fr.headers,
      "Content-Type": JSON_TYPE,
      ...(result.noStore ? NO_STORE : {}),
      ...(result.etag ? { ETag: `"${result.etag}"` } : {}),
    },
    bodies: { identity: body },
    ...(stablePrefixBytes !== undefined ? { stablePrefixBytes } : {}),
  };
}

/** An entry's headers for service second `now` when only the data age moved (a body without `_meta`); its ETag is kept. */
export function refreshedHeaders(route: JsonRoute, entry: CachedResponse, now: number): Record<string, string> {
  const etag = entry.headers.ETag;
  return {
    ...freshness(route, now, entry.dataAsOf, entry.cacheProfile).headers,
    "Content-Type": JSON_TYPE,
    ...(entry.noStore ? NO_STORE : {}),
    ...(etag ? { ETag: etag } : {}),
  };
}

/**
 * The handler step of a JSON route (last of lane → validate → responseCache → handler): starts the
 * answer of the validated request (`c.var.input`, with the body reader on POST routes) and leaves
 * its promise in `c.var.rendered` for the responseCache step, which awaits, caches and writes it (so
 * a handler's error reaches that step and every request waiting on the render, not Hono's handler
 * chain). The promise rejects with what `respond` throws.
 */
export function render(route: JsonRoute): MiddlewareHandler {
  const post = route.method === "POST";
  return async (c) => {
    const { ctx } = c.get("input");
    c.set("rendered", respond(route, post ? { ...ctx, readBody: bodyReader(c) } : ctx));
  };
}
