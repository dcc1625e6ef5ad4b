import { z } from "zod";
import { readCsvRows, ReaderDrops } from "../file-formats.ts";
import { RowCollector } from "../parse-helpers.ts";
import { alignDailyLabel } from "../time.ts";
import type { Capture, Endpoint, ReaderOutput, RowSink } from "../types.ts";

/**
 * Archive-only input: Alchemy's recorded daily prices, with no live client of ours. They load into
 * the warehouse history table `raw_price_history` like any other history capture.
 */

const AlchemyPriceRow = z.object({
  source: z.string(),
  gecko_id: z.string().min(1),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  price_usd: z.number().positive(),
});

/**
 * Daily USD prices from Alchemy's historical token-price API (as recorded by bhemen/crypto_insights).
 * Payload: `{ geckoId, points: [{ date ("YYYY-MM-DD", a UTC day), price (USD, text) }] }`. Same raw
 * table as DefiLlama prices, source `alchemy`. The series is a copy of CoinGecko's daily series
 * (MANIFEST: 857/857 shared days equal), so its family is `coingecko`. Bad points drop only themselves.
 */
export const alchemyDailyPricesArchive: Endpoint = {
  key: "alchemy.daily_prices",
  source: "alchemy",
  lineage: { family: "coingecko", derivedFrom: "coingecko" },
  time: { zone: "UTC", dailyBucket: "00:00 UTC point (one row per UTC day)" },
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: Number.POSITIVE_INFINITY,
  payloadSchema: z.object({ geckoId: z.string(), points: z.array(z.unknown()) }),
  rowSchema: AlchemyPriceRow,
  table: {
    name: "raw_price_history",
    columns: { source: "VARCHAR", gecko_id: "VARCHAR", date: "VARCHAR", price_usd: "DOUBLE" },
  },
  toRows(payload: { geckoId: string; points: unknown[] }, _capture: Capture, out?: RowSink) {
    const rc = new RowCollector(AlchemyPriceRow, out);
    for (const raw of payload.points) {
      const p = (raw && typeof raw === "object" ? raw : {}) as { date?: unknown; price?: unknown };
      if (typeof p.date !== "string") {
        rc.drop("time-label-invalid");
        continue;
      }
      const day = alignDailyLabel(p.date, "UTC");
      if (!day.ok) {
        rc.drop(day.reason);
        continue;
      }
      const price =
        typeof p.price === "string" && p.price.trim() !== ""
          ? Number(p.price)
          : typeof p.price === "number"
            ? p.price
            : NaN;
      if (!Number.isFinite(price) || price <= 0) {
        rc.drop("price-non-positive-or-nan");
        continue;
      }
      rc.add({ source: "alchemy", gecko_id: payload.geckoId, date: day.date, price_usd: price });
    }
    return rc.result();
  },
};

// ---------------------------------------------------------------------------------------------
// Recorded-file readers.

/**
 * Alchemy daily price CSV (`timestamp` = a UTC day `YYYY-MM-DD`, `price` USD) → alchemy payload.
 * Rows papaparse flags are dropped as `csv-parse-error`.
 */
export function readAlchemyPriceCsv(geckoId: string) {
  return (text: string): ReaderOutput => {
    const drops = new ReaderDrops();
    const points = readCsvRows(text, drops).map((r) => ({ date: r.timestamp, price: r.price }));
    return drops.output([{ params: { id: geckoId }, payload: { geckoId, points } }]);
  };
}
