import type { MiddlewareHandler } from "hono";
import { compressBody, type ContentCoding } from "../lib/encoding.ts";
import { type ClockMode, serviceSecond } from "../lib/clock.ts";
import { must } from "../../lib/must.ts";
import type { PublishedStore } from "../lib/published.ts";
import { type CachedResponse, ResponseCache } from "../lib/response-cache.ts";
import type { JsonRoute } from "../routes/route.ts";
import type { Cors } from "./cors.ts";
import { refreshedHeaders } from "./json-route.ts";
import { cacheableGet } from "./lane.ts";
import { codingFor, notModifiedHeaders, sentHeaders } from "./response-writer.ts";

/** What the response cache reads: the published builds, the clock, CORS and its byte budget. */
export interface RouteResponsesDeps {
  store: PublishedStore;
  clockMode: ClockMode;
  /** Wall clock, ms. */
  nowMs: () => number;
  cors: Cors;
  /** Byte budget of the one response cache (default 16 MiB, ResponseCache). */
  maxBytes?: number;
}

/**
 * How a cached entry stands for the serving build `buildId` and service second `now`: `current` (same
 * build and second: send it as it is), `refresh` (same build, a later second, a body without `_meta`:
 * only the data-age headers move) or `render` (another build, or a time-dependent body of another second).
 */
export function entryState(
  entry: CachedResponse,
  buildId: string | null,
  now: number,
): "current" | "refresh" | "render" {
  if (entry.buildId !== buildId) return "render";
  if (entry.nowSec === now) return "current";
  return entry.timeDependent ? "render" : "refresh";
}

/**
 * Brings a cached answer that does not depend on the time (`refresh` state) to the service second
 * `now`: its freshness headers are recomputed (refreshedHeaders), the body is kept. Synchronous, so the
 * Node fast path does it too instead of sending the first request of each second the slow way.
 */
function refresh(route: JsonRoute, entry: CachedResponse, now: number): void {
  entry.headers = refreshedHeaders(route, entry, now);
  entry.nowSec = now;
  entry.sent = undefined;
}

/** A cached answer the Node fast path may send: its route, entry, coding and body bytes. */
export interface NodeHit {
  route: JsonRoute;
  entry: CachedResponse;
  coding: ContentCoding;
  body: Uint8Array;
}

/**
 * The one byte-budgeted response cache of the public listener, shared by the app (the responseCache
 * step of each JSON route) and the Node fast path (`nodeHit`), with one render per cache key in flight.
 */
export class RouteResponses {
  /** Entries by cache key; the request URLs the fast path recognises are kept with them (tag: the route). */
  private readonly cache: ResponseCache<JsonRoute>;
  /**
   * Renders in flight per cache key: requests that arrive while a key is rendered for a build and
   * second (a new build, or a new second of a time-dependent answer) wait for that render, not another.
   */
  private readonly rendering = new Map<
    string,
    { buildId: string | null; nowSec: number; done: Promise<CachedResponse> }
  >();

  constructor(private readonly deps: RouteResponsesDeps) {
    this.cache = new ResponseCache<JsonRoute>(deps.maxBytes);
  }

  /**
   * The responseCache step of a JSON route (after validate, before the handler step): answers from the
   * cached response when it is valid for this build and second (parameters were validated when it was
   * made), else runs the handler step (`next`, which leaves the promise of its answer in `c.var.rendered`) and caches what it
   * rendered; then writes it: 304 for a matching `If-None-Match`, else the body in the accepted coding
   * (a published file's stored sibling, else compressed once and kept). Keyed GET URLs it answered
   * become known to the fast path.
   */
  responseCache(route: JsonRoute): MiddlewareHandler {
    const cacheable = cacheableGet(route);
    const aliased = cacheable && route.lane === "apiKey";
    return async (c, next) => {
      const cors = this.deps.cors.headers(c.req.header("Origin"));
      const { build, clock, raw } = c.get("input");
      const buildId = build?.id ?? null;
      const renderNow = async () => {
        await next();
        return must(c.get("rendered") as Promise<CachedResponse> | undefined, `answer of ${route.operationId}`);
      };
      let entry = cacheable ? this.cache.get(raw.key) : undefined;
      const state = entry ? entryState(entry, buildId, clock.now) : "render";
      if (!entry || state === "render") {
        entry = cacheable ? await this.renderOnce(raw.key, buildId, clock.now, renderNow) : await renderNow();
      } else if (state === "refresh") refresh(route, entry, clock.now);
      const notModified = notModifiedHeaders(entry, c.req.header("If-None-Match"), cors);
      if (notModified) return new Response(null, { status: 304, headers: notModified });
      const coding = codingFor(entry, c.req.header("Accept-Encoding"));
      let body = entry.bodies[coding];
      if (!body) {
        body =
          (entry.file && build && (await build.file(entry.file, coding as "br" | "gzip"))) ||
          compressBody(
            entry.bodies.identity,
            coding as "br" | "gzip",
            entry.stablePrefixBytes !== undefined ? { key: raw.key, bytes: entry.stablePrefixBytes } : undefined,
          );
        if (cacheable) this.cache.addBody(raw.key, entry, coding, body);
      }
      if (aliased) this.cache.alias(c.req.raw.url.slice(c.req.raw.url.indexOf("/", 8)), raw.key, route);
      // A plain header object lets @hono/node-server write the response without building Headers.
      return new Response(body as Uint8Array<ArrayBuffer>, {
        status: 200,
        headers: sentHeaders(entry, cors, coding, body),
      });
    };
  }

  /**
   * The cached answer to a Node request for `url` (path and query as sent) when the app answered that
   * URL before and its entry is for the serving build and, once its freshness headers are refreshed
   * when needed, this service second (a time-dependent body made in an earlier second is not: the app
   * renders it), with a body stored in the coding `acceptEncoding` gets; undefined otherwise (the app answers).
   * `nowMs`: the app clock's reading for this request (read here when absent).
   */
  nodeHit(url: string, acceptEncoding: string | undefined, nowMs = this.deps.nowMs()): NodeHit | undefined {
    const known = this.cache.lookup(url);
    if (!known) return undefined;
    const build = this.deps.store.current();
    if (!build) return undefined;
    const { entry, tag: route } = known;
    const now = serviceSecond(build, this.deps.clockMode, nowMs);
    const state = entryState(entry, build.id, now);
    if (state === "render") return undefined;
    if (state === "refresh") refresh(route, entry, now);
    const coding = codingFor(entry, acceptEncoding);
    const body = entry.bodies[coding];
    return body ? { route, entry, coding, body } : undefined;
  }

  /**
   * When the app is rendering the answer to a known `url` for the serving build and this service
   * second (a time-dependent body's first request of the second), a promise settled once that render
   * is stored and the request that started it has had its turn (compressing and storing its coding);
   * undefined otherwise. The fast path waits on it instead of sending every request of that moment
   * the slow way; it never rejects.
   */
  afterRender(url: string): Promise<void> | undefined {
    const known = this.cache.lookup(url);
    const build = this.deps.store.current();
    if (!known || !build) return undefined;
    const pending = this.rendering.get(known.key);
    if (
      !pending ||
      pending.buildId !== build.id ||
      pending.nowSec !== serviceSecond(build, this.deps.clockMode, this.deps.nowMs())
    )
      return undefined;
    return pending.done.then(
      () => new Promise<void>((r) => setImmediate(r)),
      () => undefined,
    );
  }

  /** Bytes, entries and known URLs of the cache (ResponseCache.stats). */
  stats(): ReturnType<ResponseCache["stats"]> {
    return this.cache.stats();
  }

  /** `render`'s entry for `key`, or the one of a render of the same build and second already in flight; stored once admitted. */
  private async renderOnce(
    key: string,
    buildId: string | null,
    nowSec: number,
    render: () => Promise<CachedResponse>,
  ): Promise<CachedResponse> {
    const pending = this.rendering.get(key);
    if (pending && pending.buildId === buildId && pending.nowSec === nowSec) return pending.done;
    const done = render();
    this.rendering.set(key, { buildId, nowSec, done });
    done
      .finally(() => {
        if (this.rendering.get(key)?.done === done) this.rendering.delete(key);
      })
      .catch(() => undefined);
    const entry = await done;
    if (this.cache.admit(key)) this.cache.set(key, entry);
    return entry;
  }
}
