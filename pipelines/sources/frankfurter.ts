import { z } from "zod";
import { RowCollector, toFiniteNumber } from "./parse-helpers.ts";
import type { Endpoint } from "./types.ts";

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
 * `GET /v1/{start}..{end}?base=EUR` — daily reference rates, working days only (carried forward
 * in SQL). Payload `{ base, rates: { "YYYY-MM-DD": { CCY: rate } } }`.
 */
export const fxRatesEndpoint: Endpoint = {
  key: "frankfurter.rates",
  source: "frankfurter",
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: 4 * 86400,
  payloadSchema: z.looseObject({ base: z.string(), rates: z.record(z.string(), z.record(z.string(), z.unknown())) }),
  rowSchema: FxRow,
  table: { name: "raw_frankfurter__rates", columns: { date: "VARCHAR", base: "VARCHAR", quote: "VARCHAR", rate: "DOUBLE" } },
  toRows(payload: { base: string; rates: Record<string, Record<string, unknown>> }) {
    const rc = new RowCollector(FxRow);
    for (const [date, quotes] of Object.entries(payload.rates).sort(([a], [b]) => a.localeCompare(b))) {
      for (const [quote, raw] of Object.entries(quotes).sort(([a], [b]) => a.localeCompare(b))) {
        const n = toFiniteNumber(raw);
        if (n === null) continue; // currency not quoted that day
        if (n === undefined || n <= 0) { rc.drop("fx-rate-invalid"); continue; }
        rc.add({ date, base: payload.base, quote, rate: n });
      }
    }
    return rc.result();
  },
  fetchLive: (client, params) =>
    client.getJson(`v1/${params.start ?? "1999-01-04"}..${params.end ?? ""}?base=${params.base ?? "EUR"}`),
};
