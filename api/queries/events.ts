import type { DuckDBValue } from "@duckdb/node-api";
import { z } from "zod";
import { decodeCursor, encodeCursor } from "../lib/cursor.ts";
import { notYetAvailable } from "../lib/http-error.ts";
import { boolParam, intParam } from "../lib/query-params.ts";
import type { PublishedDb } from "../lib/published-db.ts";
import type { ServingBuild } from "../lib/published.ts";

const SEVERITIES = ["info", "warning", "critical"] as const;
const list = (re: RegExp, what: string) => z.string().max(500, "must be at most 500 characters").transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean))
  .pipe(z.array(z.string().regex(re, what)).min(1, "must name at least one value").max(20, "must name at most 20 values"));
const unix = intParam(1, 4102444800);

/**
 * Query parameters of `/api/events`. Lists are comma-separated. `type`: slugs like `depeg.started`
 * or a prefix `depeg.*`; `class`: `depeg`, `freeze`, `score`; `severityFloor`: `info` < `warning` <
 * `critical`; `since`/`until`: Unix seconds (inclusive/exclusive); `q`: case-insensitive substring
 * of title or symbol (`%`/`_` literal).
 */
export const EventsQuery = z.object({
  type: list(/^[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?$/, "must be event type slugs or prefix.*").optional().describe("Event types, comma-separated (`depeg.started`, `depeg.*`)"),
  class: z.enum(["depeg", "freeze", "score"]).optional().describe("Event class"),
  coin: list(/^[a-z0-9]+(-[a-z0-9]+)+$/, "must be canonical stablecoin ids").optional().describe("Stablecoin ids, comma-separated"),
  pegCurrency: z.string().regex(/^[A-Z]{3}$/, "must be a 3-letter currency code").optional().describe("Peg currency, e.g. USD, EUR"),
  chain: z.string().regex(/^[a-z0-9-]+$/, "must be a registry chain id").optional().describe("Registry chain id"),
  q: z.string().max(200, "must be at most 200 characters").optional().describe("Search in title and symbol (≤ 200 chars)"),
  severityFloor: z.enum(SEVERITIES).optional().describe("Minimum severity"),
  since: unix.optional().describe("Events at or after (Unix s)"),
  until: unix.optional().describe("Events before (Unix s)"),
  cursor: z.string().max(200, "not a cursor returned by this endpoint").optional().describe("Opaque keyset cursor from `nextCursor`"),
  limit: intParam(1, 500).optional().describe("1-500, default 50"),
  includeTotal: boolParam(false).describe("true adds the exact `total` (default false)"),
});

/** Pages the tape newest first (`ts` desc, `id` desc). Throws HttpError 400 on a bad cursor, 503 without a database. */
export async function queryEvents(db: PublishedDb, build: ServingBuild, q: z.output<typeof EventsQuery>) {
  const where: string[] = [];
  const v: Record<string, DuckDBValue> = {};
  if (q.type) {
    const parts = q.type.map((t, i) => {
      if (t.endsWith(".*")) { v[`tp${i}`] = `${t.slice(0, -2)}.`; return `starts_with(type, $tp${i})`; }
      v[`t${i}`] = t;
      return `type = $t${i}`;
    });
    where.push(`(${parts.join(" or ")})`);
  }
  if (q.class) { where.push("class = $class"); v.class = q.class; }
  if (q.coin) { where.push(`stablecoin_id in (${q.coin.map((_, i) => `$coin${i}`).join(", ")})`); q.coin.forEach((c, i) => { v[`coin${i}`] = c; }); }
  if (q.pegCurrency) { where.push("peg_currency = $peg"); v.peg = q.pegCurrency; }
  if (q.chain) { where.push("chain = $chain"); v.chain = q.chain; }
  if (q.q) { where.push("(contains(lower(title), $q) or contains(lower(symbol), $q))"); v.q = q.q.toLowerCase(); }
  if (q.severityFloor) {
    const allowed = SEVERITIES.slice(SEVERITIES.indexOf(q.severityFloor));
    where.push(`severity in (${allowed.map((s) => `'${s}'`).join(", ")})`);
  }
  if (q.since !== undefined) { where.push("ts >= $since"); v.since = q.since; }
  if (q.until !== undefined) { where.push("ts < $until"); v.until = q.until; }
  const filter = [...where];
  const fv = { ...v };
  if (q.cursor) {
    const c = decodeCursor(q.cursor);
    filter.push("(ts < $c_ts or (ts = $c_ts and id < $c_id))");
    fv.c_ts = c.ts;
    fv.c_id = c.id;
  }
  const limit = q.limit ?? 50;
  const rows = await db.all<Record<string, any>>(build,
    `select * from tape_events ${filter.length ? `where ${filter.join(" and ")}` : ""} order by ts desc, id desc limit ${limit + 1}`, fv);
  if (rows === null) throw notYetAvailable("events");
  const events = rows.slice(0, limit).map((r) => ({
    id: r.id, type: r.type, class: r.class, ts: Number(r.ts), stablecoinId: r.stablecoin_id, symbol: r.symbol, pegCurrency: r.peg_currency,
    chain: r.chain ?? null, severity: r.severity, title: r.title,
    data: { deviationBps: r.deviation_bps === null ? null : Number(r.deviation_bps), depegEventId: r.depeg_event_id === null ? null : Number(r.depeg_event_id) },
  }));
  const exact = q.includeTotal;
  const total = exact ? (await db.all<{ n: number }>(build, `select count(*)::integer as n from tape_events ${where.length ? `where ${where.join(" and ")}` : ""}`, v))![0].n : null;
  const last = events.at(-1);
  return { events, total, totalExact: exact, nextCursor: rows.length > limit && last ? encodeCursor(last.ts, last.id) : null };
}
