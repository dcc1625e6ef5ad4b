import { z } from "zod";
import type { DepegEvent, DepegLedger } from "../../site-data/depeg-events.ts";
import { methodology } from "../../site-data/peg-summary.ts";
import { decodeCursor, encodeCursor } from "../lib/cursor.ts";
import { HttpError } from "../lib/http-error.ts";
import { boolParam, intParam } from "../lib/query-params.ts";

/** Query parameters of `/api/depeg-events` (spec 4.3). */
export const DepegEventsQuery = z.object({
  stablecoin: z
    .string()
    .max(200, "must be at most 200 characters")
    .optional()
    .describe("Canonical stablecoin id; unknown or non-canonical ids (e.g. `USDC`) are 404 (spec 1 rule 3)"),
  active: z
    .enum(["true", "false"])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === "true"))
    .describe("`true`: only ongoing events; `false`: only ended ones"),
  limit: intParam(1, 1000).default(100).describe("Page size, 1-1000 (default 100)"),
  offset: intParam(0, 50000).optional().describe("0-50000; cannot combine with cursor"),
  cursor: z
    .string()
    .max(200, "not a cursor returned by this endpoint")
    .optional()
    .describe("Opaque keyset cursor from `nextCursor`"),
  includeTotal: boolParam(true).describe("false skips the exact count (`totalExact` false)"),
  includePending: boolParam(false).describe("true adds `pending` incidents awaiting confirmation"),
});
export type DepegEventsParams = z.output<typeof DepegEventsQuery>;

export const DEPEG_METHODOLOGY_LABEL =
  "Depeg detection v3: 15-minute consensus grid, 100/150 bps thresholds, confirmation by independent source families or a confirmed dependency incident, coverage gaps and tracking loss at as-of end incidents, peaks from guarded bar extremes";

/**
 * Pages the build's depeg ledger (`site-data/depeg-events.json`, already in `startedAt` desc, `id`
 * desc order) with keyset cursors on both. `total` counts every incident matching the filters;
 * `counts.thresholdCrossings` sums their linked raw rows. Throws HttpError 400 (offset with cursor,
 * bad cursor), 404 (unknown or non-canonical stablecoin id).
 */
export function queryDepegEvents(ledger: DepegLedger, asOf: number, q: DepegEventsParams) {
  if (q.offset !== undefined && q.cursor !== undefined)
    throw new HttpError(400, "Invalid parameter cursor: cannot combine with offset");
  if (q.stablecoin !== undefined && !ledger.stablecoinIds.includes(q.stablecoin))
    throw new HttpError(404, `Unknown stablecoin id: ${q.stablecoin}`);
  const matches = (e: DepegEvent) =>
    (q.stablecoin === undefined || e.stablecoinId === q.stablecoin) &&
    (q.active === undefined || (e.endedAt === null) === q.active);
  let after: (e: DepegEvent) => boolean = () => true;
  if (q.cursor) {
    const c = decodeCursor(q.cursor);
    if (!/^\d{1,17}$/.test(c.id))
      throw new HttpError(400, "Invalid parameter cursor: not a cursor returned by this endpoint");
    const id = Number(c.id);
    after = (e) => e.startedAt < c.ts || (e.startedAt === c.ts && e.id < id);
  }
  const matching = ledger.events.filter(matches);
  const start = q.offset ?? 0;
  const rest = q.cursor ? matching.filter(after) : matching.slice(start);
  const events = rest.slice(0, q.limit);
  const last = events.at(-1);
  const counts = q.includeTotal
    ? { incidents: matching.length, thresholdCrossings: matching.reduce((sum, e) => sum + e.constituentEventCount, 0) }
    : undefined;
  const pending = q.includePending
    ? ledger.pending.filter((p) => q.stablecoin === undefined || p.stablecoinId === q.stablecoin)
    : undefined;
  return {
    events,
    ...(pending ? { pending } : {}),
    total: counts ? counts.incidents : start + events.length,
    totalExact: q.includeTotal,
    ...(counts ? { counts } : {}),
    nextCursor: rest.length > q.limit && last ? encodeCursor(last.startedAt, String(last.id)) : null,
    methodology: methodology("ballast-depeg-v4", DEPEG_METHODOLOGY_LABEL, asOf),
  };
}
