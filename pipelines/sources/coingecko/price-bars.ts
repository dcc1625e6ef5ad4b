import { z } from "zod";
import { parseJsonText } from "../file-formats.ts";
import { isoDay, RowCollector, toFiniteNumber } from "../parse-helpers.ts";
import { INTRADAY_BAR_TIME, PRICE_BARS_TABLE, PriceBarRow } from "../price-bars.ts";
import type { Capture, Endpoint, ReaderOutput, RowSink } from "../types.ts";

/**
 * Intraday USD bars of one coin from a CoinGecko range query, as recorded (archive-only; no live
 * client of ours). Payload `{ geckoId, intervalSec, bars: [{ dt (bar open, ISO-8601 UTC), o, h, l, c }] }`;
 * `ts` = bar open + interval (Unix s, UTC). A malformed bar drops only itself (counted).
 */
export const coingeckoPriceBarsArchive: Endpoint = {
  key: "coingecko.price_bars",
  source: "coingecko",
  lineage: { family: "coingecko", derivedFrom: null },
  time: INTRADAY_BAR_TIME,
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: Number.POSITIVE_INFINITY,
  payloadSchema: z.object({
    geckoId: z.string(),
    intervalSec: z.number().int().positive(),
    bars: z.array(z.unknown()),
  }),
  rowSchema: PriceBarRow,
  table: { name: PRICE_BARS_TABLE.name, columns: { ...PRICE_BARS_TABLE.columns } },
  toRows(payload: { geckoId: string; intervalSec: number; bars: unknown[] }, _capture: Capture, out?: RowSink) {
    const rc = new RowCollector(PriceBarRow, out);
    for (const raw of payload.bars) {
      if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
        rc.drop("bar-invalid");
        continue;
      }
      const b = raw as Record<string, unknown>;
      const [open, high, low, close] = [b.o, b.h, b.l, b.c].map(toFiniteNumber);
      if ([open, high, low, close].some((v) => v === undefined || v === null || v <= 0)) {
        rc.drop("price-non-positive-or-nan");
        continue;
      }
      // `dt` must carry an explicit UTC designator (`Z` or +00:00); a zone-less label is ambiguous.
      const start =
        typeof b.dt === "string" && /(Z|[+-]00:?00)$/.test(b.dt) ? Math.floor(Date.parse(b.dt) / 1000) : NaN;
      if (!Number.isFinite(start)) {
        rc.drop("bar-time-invalid");
        continue;
      }
      const ts = start + payload.intervalSec;
      rc.add({
        source: "coingecko",
        gecko_id: payload.geckoId,
        quote: "USD",
        date: isoDay(ts),
        ts,
        interval_sec: payload.intervalSec,
        open,
        high,
        low,
        close,
      });
    }
    return rc.result();
  },
};

// ---------------------------------------------------------------------------------------------
// Recorded-file readers.

/**
 * Recorded `{meta, data: [{dt (bar open, ISO-8601 UTC), o, h, l, c, v}]}` range bars of one coin
 * (USD) → price_bars payload. Invalid JSON throws a JsonPositionError naming line/column/offset.
 */
export function readCoingeckoRangeBarsJson(geckoId: string, intervalSec: number) {
  return (text: string): ReaderOutput => {
    const doc = parseJsonText(text) as { data?: unknown } | null;
    return {
      captures: [{ params: { id: geckoId }, payload: { geckoId, intervalSec, bars: doc?.data ?? [] } }],
      dropped: {},
    };
  };
}
