import { z } from "zod";
import { TAPE_EVENT_CLASSES, TAPE_EVENT_TYPES, type TapeEvent, type TapeLedger } from "../../site-data/depeg-events.ts";
import { decodeCursor, encodeCursor } from "../lib/cursor.ts";
import { boolParam, intParam } from "../lib/query-params.ts";

const SEVERITIES = ["info", "warning", "critical"] as const;
const list = (re: RegExp, what: string) =>
  z
    .string()
    .max(500, "must be at most 500 characters")
    .transform((s) =>
      s
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(z.string().regex(re, what)).min(1, "must name at least one value").max(20, "must name at most 20 values"),
    );
const unix = intParam(1, 4102444800);

/** Values the `type` filter accepts: every tape event type (TAPE_EVENT_TYPES) and each class prefix `<class>.*`. */
const EVENT_TYPE_VALUES = [...TAPE_EVENT_TYPES, ...TAPE_EVENT_CLASSES.map((c) => `${c}.*`)];
/** Exactly one of EVENT_TYPE_VALUES. */
const EVENT_TYPE_FILTER = new RegExp(`^(${EVENT_TYPE_VALUES.map((v) => v.replace(/[.*]/g, "\\$&")).join("|")})$`);

/**
 * Query parameters of `/api/events`. Lists are comma-separated. `type`: event types (TAPE_EVENT_TYPES,
 * e.g. `depeg.started`) or a class prefix `depeg.*`, anything else is 400 naming `type`; `class`: `depeg`, `freeze`, `score`; `severityFloor`: `info` < `warning` <
 * `critical`; `since`/`until`: Unix seconds (inclusive/exclusive); `q`: case-insensitive substring
 * of title or symbol (`%`/`_` literal).
 */
export const EventsQuery = z.object({
  type: list(EVENT_TYPE_FILTER, `must be event types or class prefixes: ${EVENT_TYPE_VALUES.join(", ")}`)
    .optional()
    .describe(`Event types, comma-separated, each one of: ${EVENT_TYPE_VALUES.map((t) => `\`${t}\``).join(", ")}`),
  class: z.enum(TAPE_EVENT_CLASSES).optional().describe("Event class"),
  coin: list(/^[a-z0-9]+(-[a-z0-9]+)+$/, "must be canonical stablecoin ids")
    .optional()
    .describe("Stablecoin ids, comma-separated"),
  pegCurrency: z
    .string()
    .regex(/^[A-Z]{3}$/, "must be a 3-letter currency code")
    .optional()
    .describe("Peg currency, e.g. USD, EUR"),
  chain: z
    .string()
    .regex(/^[a-z0-9-]+$/, "must be a registry chain id")
    .optional()
    .describe("Registry chain id"),
  q: z
    .string()
    .max(200, "must be at most 200 characters")
    .optional()
    .describe("Search in title and symbol (≤ 200 chars)"),
  severityFloor: z.enum(SEVERITIES).optional().describe("Minimum severity"),
  since: unix.optional().describe("Events at or after (Unix s)"),
  until: unix.optional().describe("Events before (Unix s)"),
  cursor: z
    .string()
    .max(200, "not a cursor returned by this endpoint")
    .optional()
    .describe("Opaque keyset cursor from `nextCursor`"),
  limit: intParam(1, 500).default(50).describe("1-500, default 50"),
  includeTotal: boolParam(false).describe("true adds the exact `total` (default false)"),
});

/**
 * Pages the build's tape (`site-data/events.json`, already `ts` desc, `id` desc) newest first with a
 * keyset cursor. Throws HttpError 400 on a bad cursor.
 */
export function queryEvents(ledger: TapeLedger, q: z.output<typeof EventsQuery>) {
  const tests: ((e: TapeEvent) => boolean)[] = [];
  if (q.type) {
    const exact = new Set(q.type.filter((t) => !t.endsWith(".*")));
    const prefixes = q.type.filter((t) => t.endsWith(".*")).map((t) => t.slice(0, -1));
    tests.push((e) => exact.has(e.type) || prefixes.some((p) => e.type.startsWith(p)));
  }
  if (q.class) tests.push((e) => e.class === q.class);
  if (q.coin) {
    const coins = new Set(q.coin);
    tests.push((e) => coins.has(e.stablecoinId));
  }
  if (q.pegCurrency) tests.push((e) => e.pegCurrency === q.pegCurrency);
  if (q.chain) tests.push((e) => e.chain === q.chain);
  if (q.q) {
    const needle = q.q.toLowerCase();
    tests.push((e) => e.title.toLowerCase().includes(needle) || e.symbol.toLowerCase().includes(needle));
  }
  if (q.severityFloor) {
    const allowed = new Set<string>(SEVERITIES.slice(SEVERITIES.indexOf(q.severityFloor)));
    tests.push((e) => allowed.has(e.severity));
  }
  if (q.since !== undefined) {
    const since = q.since;
    tests.push((e) => e.ts >= since);
  }
  if (q.until !== undefined) {
    const until = q.until;
    tests.push((e) => e.ts < until);
  }
  const matching = ledger.events.filter((e) => tests.every((t) => t(e)));
  let rest = matching;
  if (q.cursor) {
    const c = decodeCursor(q.cursor);
    rest = matching.filter((e) => e.ts < c.ts || (e.ts === c.ts && e.id < c.id));
  }
  const limit = q.limit;
  const events = rest.slice(0, limit);
  const last = events.at(-1);
  return {
    events,
    total: q.includeTotal ? matching.length : null,
    totalExact: q.includeTotal,
    nextCursor: rest.length > limit && last ? encodeCursor(last.ts, last.id) : null,
  };
}
