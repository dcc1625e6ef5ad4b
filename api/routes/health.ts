import { buildHealth } from "../health.ts";
import type { RouteDecl } from "./route.ts";

/** `/api/health` (spec 2.8): exempt from key, never cached by the API (it reports live dependency state). */
export const HEALTH_ROUTES: RouteDecl[] = [
  {
    kind: "json", operationId: "getHealth", method: "GET", path: "/api/health", lane: "public", tag: "health", cache: "realtime", meta: false, cacheable: false,
    summary: "Service health (exempt from key)",
    description: "Health resource (spec 2.8). `clock` tells whether the replay clock (recorded builds) or the wall clock is in force; `stateStore` reports the key store; `blacklist`/`mintBurn` are null until those features are published. See the README's \"Health of a recorded build\".",
    handler: async (ctx) => ({ payload: buildHealth(ctx.build, ctx.now, ctx.clock, { stateStore: ctx.services.stateStore?.() }), dataAsOf: null }),
  },
];
