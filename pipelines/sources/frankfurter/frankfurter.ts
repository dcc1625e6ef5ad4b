import { z } from "zod";
import { readCsvRows, ReaderDrops } from "../file-formats.ts";
import { RowCollector, toFiniteNumber } from "../parse-helpers.ts";
import { alignDailyLabel } from "../time.ts";
import type { Capture, Endpoint, ReaderOutput, RowSink, SourceTime } from "../types.ts";

/** Frankfurter FX (ECB reference rates), v1 API. Wire format: shared/reference/upstreams.md §4. */
export const FRANKFURTER_BASE_URL = "https://api.frankfurter.dev/";

const FxRow = z.object({
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  base: z.string().length(3),
  quote: z.string().min(3),
  /** Units of `quote` per 1 unit of `base`. */
  rate: z.number().positive(),
});

/**
 * ECB reference rates are dated by ECB business day (fixed about 14:15 CET, Frankfurt): a date
 * label D is a day in Europe/Berlin and, by the daily rule, the row of UTC date D.
 */
export const ECB_TIME: SourceTime = {
  zone: "Europe/Berlin",
  dailyBucket: "ECB business date D (fixed ~14:15 CET) = UTC date D",
};

/**
 * `GET /v1/{start}..{end}?base=EUR` — daily ECB reference rates (units of quote per 1 base),
 * working days only (carried forward in SQL). Payload `{ base, rates: { "YYYY-MM-DD": { CCY: rate } } }`.
 * A malformed date entry or rate drops only itself (counted).
 */
export const fxRatesEndpoint: Endpoint = {
  key: "frankfurter.rates",
  source: "frankfurter",
  lineage: { family: "ecb", derivedFrom: "ecb" },
  time: ECB_TIME,
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: 4 * 86400,
  /** An ECB reference rate of day D values D and the 4 days after it (weekends, holidays); later it is `fx-stale`. */
  currentWindowSec: 4 * 86400,
  payloadSchema: z.looseObject({ base: z.string(), rates: z.record(z.string(), z.unknown()) }),
  rowSchema: FxRow,
  table: {
    name: "raw_frankfurter__rates",
    columns: { date: "VARCHAR", base: "VARCHAR", quote: "VARCHAR", rate: "DOUBLE" },
  },
  toRows(payload: { base: string; rates: Record<string, unknown> }, _capture: Capture, out?: RowSink) {
    const rc = new RowCollector(FxRow, out);
    for (const [label, quotes] of Object.entries(payload.rates).sort(([a], [b]) => a.localeCompare(b))) {
      const day = /^\d{4}-\d{2}-\d{2}$/.test(label)
        ? alignDailyLabel(label, ECB_TIME.zone)
        : { ok: false as const, reason: "time-label-invalid" };
      if (!day.ok) {
        rc.drop(day.reason);
        continue;
      }
      if (!quotes || typeof quotes !== "object" || Array.isArray(quotes)) {
        rc.drop("fx-day-invalid");
        continue;
      }
      const date = day.date;
      for (const [quote, raw] of Object.entries(quotes as Record<string, unknown>).sort(([a], [b]) =>
        a.localeCompare(b),
      )) {
        const n = toFiniteNumber(raw);
        if (n === null) continue; // currency not quoted that day
        if (n === undefined || n <= 0) {
          rc.drop("fx-rate-invalid");
          continue;
        }
        rc.add({ date, base: payload.base, quote, rate: n });
      }
    }
    return rc.result();
  },
  fetchLive: (client, params) =>
    client.getJson(`v1/${params.start ?? "1999-01-04"}..${params.end ?? ""}?base=${params.base ?? "EUR"}`),
};

/**
 * ECB `eurofxref-hist.csv` (`Date` = ECB business day, one column per currency in units per EUR,
 * `N/A` when missing, trailing comma) → Frankfurter time-series payload with base EUR. Rows
 * papaparse flags are dropped as `csv-parse-error`.
 */
export function readEcbHistCsv(text: string): ReaderOutput {
  const drops = new ReaderDrops();
  const rates: Record<string, Record<string, string>> = {};
  for (const r of readCsvRows(text, drops)) {
    const quotes: Record<string, string> = {};
    for (const [k, v] of Object.entries(r)) if (k && k !== "Date" && v && v !== "N/A") quotes[k] = v;
    rates[r.Date] = quotes;
  }
  return drops.output([{ params: { base: "EUR" }, payload: { base: "EUR", rates } }]);
}
