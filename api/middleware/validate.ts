import type { MiddlewareHandler } from "hono";
import { type ClockMode, serviceNow } from "../lib/clock.ts";
import type { PublishedStore, ServingBuild } from "../lib/published.ts";
import type { CachedResponse } from "../lib/response-cache.ts";
import type { HandlerContext, JsonRoute, RouteServices, StaticRoute } from "../routes/route.ts";
import { requestKey, validatedContext } from "./json-route.ts";

/** What the validate step leaves for the steps after it (`c.var.input`). */
export interface RequestInput {
  /** The serving build, resolved once for the request (null before the first publication). */
  build: ServingBuild | null;
  /** Service time of the request (serviceNow). */
  clock: ReturnType<typeof serviceNow>;
  /** The request's cache key and raw parameters (requestKey). */
  raw: ReturnType<typeof requestKey>;
  /** The handler context of the validated parameters. */
  ctx: HandlerContext;
}

declare module "hono" {
  interface ContextVariableMap {
    /** Set by the validate step (api/middleware/validate.ts). */
    input: RequestInput;
    /** Set by a JSON route's handler step (json-route.ts `render`): its answer, awaited by the responseCache step. */
    rendered: Promise<CachedResponse>;
  }
}

/** What the validate step reads: the published builds, the clock and what the server wires in for handlers. */
export interface ValidateDeps {
  store: PublishedStore;
  clockMode: ClockMode;
  /** Wall clock, ms. */
  nowMs: () => number;
  services: RouteServices;
}

/**
 * The validate step of a JSON or static route (after the lane step): resolves the serving build and
 * the service second once, and validates the path and query parameters into the handler context
 * (`c.var.input`) before the rest of the chain runs.
 * @throws HttpError 400 naming the first bad or unknown parameter.
 */
export function validate(route: JsonRoute | StaticRoute, deps: ValidateDeps): MiddlewareHandler {
  const base = { store: deps.store, services: deps.services };
  return async (c, next) => {
    const build = await deps.store.build();
    const clock = serviceNow(build, deps.clockMode, deps.nowMs());
    const raw = requestKey(c, route);
    c.set("input", { build, clock, raw, ctx: validatedContext(route, raw, build, clock, base) });
    await next();
  };
}
