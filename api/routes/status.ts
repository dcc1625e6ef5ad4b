import { z } from "zod";
import { HttpError } from "../lib/http-error.ts";
import { apiLog, errorMessage } from "../lib/log.ts";
import { intParam } from "../lib/query-params.ts";
import { publicReason } from "../lib/status-history.ts";
import { servingHealth } from "./health.ts";
import type { RouteDecl } from "./route.ts";
import { declareTag } from "./tags.ts";

/** Windows of `/api/public-status-history` (spec 4.1), in seconds. */
export const STATUS_WINDOWS = { "24h": 86_400, "7d": 7 * 86_400, "30d": 30 * 86_400 } as const;
/** Default and bounds of `limit` (spec 4.1, 8). */
export const STATUS_LIMIT = { min: 1, max: 200, default: 50 } as const;
/**
 * Freshness budget of the history (s): the time since the status was last evaluated. Recorders
 * evaluate every 60 s; past 1800 s (1x, the status system's freshness) the answer carries
 * `Warning: 110` and `Cache-Control: no-store`, past 3600 s also `X-Data-Freshness: stale`.
 */
export const STATUS_HISTORY_MAX_AGE_SEC = 1800;

const Status = z.enum(["healthy", "degraded", "stale"]);

/** Query of `/api/public-status-history`: `limit` 1-200 (default 50) and `window` (default 30d); out-of-range or unknown values are 400 naming the parameter. */
const PublicStatusHistoryQuery = z.object({
  limit: intParam(STATUS_LIMIT.min, STATUS_LIMIT.max)
    .default(STATUS_LIMIT.default)
    .describe("Transitions, newest first, 1-200 (default 50)"),
  window: z
    .enum(["24h", "7d", "30d"], { error: "must be 24h, 7d or 30d" })
    .default("30d")
    .describe("Window ending now: `24h`, `7d` or `30d` (default `30d`)"),
});

/** Body of `/api/public-status-history` (spec 2.9). Times Unix s on the service clock (that of `/api/health` `timestamp`). */
export const PublicStatusHistorySchema = z.object({
  timestamp: z.number().int(),
  currentStatus: Status,
  lastChangedAt: z.number().int().nullable(),
  transitions: z.array(
    z.object({
      id: z.number().int(),
      from: Status.nullable(),
      to: Status,
      transitionType: z.enum(["init", "degrade", "recover"]),
      reason: z.string(),
      at: z.number().int(),
    }),
  ),
});
export type PublicStatusHistory = z.infer<typeof PublicStatusHistorySchema>;

/** The route's one failure (reference 8.3): the store could not be read. `Cache-Control: no-store` like every error. */
const unavailable = () => new HttpError(503, "Public status history unavailable", { "Retry-After": "60" });

/** `/api/public-status-history` (spec 2.9, 4.1). */
export const STATUS_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "getPublicStatusHistory",
    method: "GET",
    path: "/api/public-status-history",
    lane: "apiKey",
    tag: declareTag("status", "Public status history: transitions of the public status, with hysteresis."),
    cache: "public-status",
    meta: false,
    cacheable: false,
    maxAgeSec: STATUS_HISTORY_MAX_AGE_SEC,
    ratios: { fresh: 1, degraded: 2 },
    query: PublicStatusHistoryQuery,
    response: PublicStatusHistorySchema,
    summary: "Public status transitions",
    description:
      'Public status history (spec 2.9). `currentStatus` is the status `/api/health` reports now; `lastChangedAt` and `transitions` come from the hysteresis state the API instances record every 60 s (`STATUS_HYSTERESIS`, docs/health.md "Status history"). Only incidents opened by public-impact causes (cache ratio, FX cached fallback, mint/burn lane, open circuit groups, state store unhealthy, no published build) are listed, with every later row up to the recovery to `healthy`; newest first, at most `limit` (1-200, default 50) within `window` (`24h`, `7d`, `30d`; default `30d`). Times are Unix s on the clock of `/api/health` `timestamp`. `X-Data-Age` is the time since the status was last evaluated. 503 `Public status history unavailable` with `Cache-Control: no-store` when the state store cannot be read.',
    handler: async (ctx) => {
      const svc = ctx.services.statusHistory;
      if (!svc) throw unavailable();
      const q = ctx.query as z.output<typeof PublicStatusHistoryQuery>;
      const windowSec = STATUS_WINDOWS[q.window];
      const limit = q.limit;
      const [history, assessment] = await Promise.all([
        svc.store.publicHistory({ wallNow: ctx.wallNow, windowSec, limit }).catch((err: unknown) => {
          apiLog("warn", "status-history", "public status history read failed", { error: errorMessage(err) });
          throw unavailable();
        }),
        servingHealth(ctx.build, ctx.now, ctx.clock, ctx.wallNow, ctx.services, ctx.store),
      ]);
      // Stored times are wall clock; the body is on the service clock of `timestamp`.
      const shift = ctx.now - ctx.wallNow;
      const body: PublicStatusHistory = {
        timestamp: ctx.now,
        currentStatus: assessment.health.status,
        lastChangedAt: history.state ? history.state.lastChangedAt + shift : null,
        transitions: history.transitions.map((t) => ({
          id: t.id,
          from: t.from,
          to: t.to,
          transitionType: t.transitionType,
          reason: publicReason(t),
          at: t.at + shift,
        })),
      };
      return { payload: body, dataAsOf: history.state ? history.state.lastEvaluatedAt + shift : null };
    },
  },
];
