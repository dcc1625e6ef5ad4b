import type { DuckDBValue } from "@duckdb/node-api";
import { z } from "zod";
import type { DepegEvent } from "../../site-data/depeg-events.ts";
import { methodology } from "../../site-data/peg-summary.ts";
import { decodeCursor, encodeCursor } from "../lib/cursor.ts";
import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import { boolParam, intParam } from "../lib/query-params.ts";
import type { PublishedDb } from "../lib/published-db.ts";
import type { ServingBuild } from "../lib/published.ts";


/** Query parameters of `/api/depeg-events` (spec 4.3). */
export const DepegEventsQuery = z.object({
  stablecoin: z.string().max(200, "must be at most 200 characters").optional().describe("Canonical stablecoin id; unknown or non-canonical ids (e.g. `USDC`) are 404 (spec 1 rule 3)"),
  active: z.enum(["true", "false"]).optional().transform((v) => (v === undefined ? undefined : v === "true")).describe("`true`: only ongoing events; `false`: only ended ones"),
  limit: intParam(1, 1000).optional().transform((v) => v ?? 100).describe("Page size, 1-1000 (default 100)"),
  offset: intParam(0, 50000).optional().describe("0-50000; cannot combine with cursor"),
  cursor: z.string().max(200, "not a cursor returned by this endpoint").optional().describe("Opaque keyset cursor from `nextCursor`"),
  includeTotal: boolParam(true).describe("false skips the exact count (`totalExact` false)"),
  includePending: boolParam(false).describe("true adds `pending` incidents awaiting confirmation"),
});
export type DepegEventsParams = z.output<typeof DepegEventsQuery>;

export const DEPEG_METHODOLOGY_LABEL = "Depeg detection v2: 15-minute consensus grid, 100/150 bps thresholds, confirmation by independent source families, coverage gaps end incidents, peaks from guarded bar extremes";

/**
 * Pages depeg incidents ordered by `startedAt` desc then `id` desc (keyset on both). `total` counts
 * every incident matching the filters; `counts.thresholdCrossings` sums linked raw rows.
 * Throws HttpError 400 (offset with cursor, bad cursor), 404 (unknown or non-canonical stablecoin id),
 * 503 (no database).
 */
export async function queryDepegEvents(db: PublishedDb, build: ServingBuild, q: DepegEventsParams) {
  const asOf = build.manifest.asOf;
  if (q.offset !== undefined && q.cursor !== undefined) throw new HttpError(400, "Invalid parameter cursor: cannot combine with offset");
  const where: string[] = [];
  const values: Record<string, DuckDBValue> = {};
  if (q.stablecoin) {
    const known = await db.all(build, "select 1 from registry_coins where id = $id", { id: q.stablecoin });
    if (known === null) throw notYetAvailable("depeg-events");
    if (!known.length) throw new HttpError(404, `Unknown stablecoin id: ${q.stablecoin}`);
    where.push("stablecoin_id = $stablecoin");
    values.stablecoin = q.stablecoin;
  }
  if (q.active !== undefined) where.push(q.active ? "ended_at is null" : "ended_at is not null");
  const filter = where.length ? `where ${where.join(" and ")}` : "";
  const page = [...where];
  const pageValues = { ...values };
  if (q.cursor) {
    const c = decodeCursor(q.cursor);
    if (!/^\d{1,17}$/.test(c.id)) throw new HttpError(400, "Invalid parameter cursor: not a cursor returned by this endpoint");
    page.push("(started_at < $c_ts or (started_at = $c_ts and id < $c_id::bigint))");
    pageValues.c_ts = c.ts;
    pageValues.c_id = c.id;
  }
  const rows = await db.all<Record<string, any>>(build,
    `select * from depeg_events ${page.length ? `where ${page.join(" and ")}` : ""}
     order by started_at desc, id desc limit ${q.limit + 1} offset ${q.offset ?? 0}`,
    pageValues,
  );
  if (rows === null) throw notYetAvailable("depeg-events");
  const more = rows.length > q.limit;
  const events = rows.slice(0, q.limit).map(toDepegEvent);
  const last = events.at(-1);
  let total: number;
  let counts: { incidents: number; thresholdCrossings: number } | undefined;
  if (q.includeTotal) {
    const [t] = (await db.all<{ n: number; crossings: number }>(build, 
      `select count(*)::integer as n, coalesce(sum(constituent_event_count), 0)::integer as crossings from depeg_events ${filter}`, values))!;
    total = t.n;
    counts = { incidents: t.n, thresholdCrossings: t.crossings };
  } else {
    total = (q.offset ?? 0) + events.length;
  }
  let pending: unknown[] | undefined;
  if (q.includePending) {
    const p = (await db.all<Record<string, any>>(build,
      `select * from depeg_pending ${q.stablecoin ? "where stablecoin_id = $stablecoin" : ""} order by first_seen_at desc, stablecoin_id`,
      q.stablecoin ? { stablecoin: q.stablecoin } : undefined))!;
    pending = p.map((r) => ({
      stablecoinId: r.stablecoin_id, symbol: r.symbol, direction: r.direction, firstSeenAt: Number(r.first_seen_at), lastSeenAt: Number(r.last_seen_at),
      firstSeenBps: Number(r.first_seen_bps), lastSeenBps: Number(r.last_seen_bps), peakSeenBps: Number(r.peak_seen_bps), reason: r.reason,
      ageSec: Number(r.age_sec), expiresAt: Number(r.expires_at), availableConfirmationCategories: JSON.parse(r.available_categories_json),
      missingConfirmationCategories: JSON.parse(r.missing_categories_json),
    }));
  }
  return {
    events,
    ...(pending ? { pending } : {}),
    total,
    totalExact: q.includeTotal,
    ...(counts ? { counts } : {}),
    nextCursor: more && last ? encodeCursor(last.startedAt, String(last.id)) : null,
    methodology: methodology("ballast-depeg-v2", DEPEG_METHODOLOGY_LABEL, asOf),
  };
}

const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));

function toDepegEvent(r: Record<string, any>): DepegEvent {
  return {
    id: Number(r.id), stablecoinId: r.stablecoin_id, symbol: r.symbol, pegType: r.peg_type, direction: r.direction,
    peakDeviationBps: Number(r.peak_deviation_bps), startedAt: Number(r.started_at), endedAt: n(r.ended_at), startPrice: Number(r.start_price),
    peakPrice: n(r.peak_price), recoveryPrice: n(r.recovery_price), pegReference: Number(r.peg_reference), source: r.source,
    confirmationSources: r.confirmation_sources ?? null, pendingReason: r.pending_reason ?? null, closeReason: r.close_reason ?? null,
    constituentEventCount: Number(r.constituent_event_count), provenance: r.provenance_json ? JSON.parse(r.provenance_json) : null,
  };
}
