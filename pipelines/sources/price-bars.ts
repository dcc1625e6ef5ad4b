import { z } from "zod";
import type { SourceTime } from "./types.ts";

/**
 * Intraday price bars shared by every intraday source (Binance klines, CoinGecko range bars): one
 * row schema, one raw table (`raw_price_bars`), one time rule.
 */

/** Intraday bars: UTC instants; `date` is the UTC calendar day of the bar end (`ts`). */
export const INTRADAY_BAR_TIME: SourceTime = { zone: "UTC", dailyBucket: "intraday bar; date = UTC day of bar end" };

/**
 * One intraday price bar of a coin: prices in `quote` units, `ts` = bar end (Unix s), the time its
 * close was observed. Shared by every intraday source (CEX klines, aggregator range bars).
 */
export const PriceBarRow = z.object({
  source: z.string(),
  /** CoinGecko id of the priced coin (the registry join key). */
  gecko_id: z.string().min(1),
  /** `USD`, or the symbol of a quote stablecoin (`USDT`) converted to USD in SQL. */
  quote: z.string().min(3),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  ts: z.number().int().positive(),
  interval_sec: z.number().int().positive(),
  open: z.number().positive(),
  high: z.number().positive(),
  low: z.number().positive(),
  close: z.number().positive(),
});

/** Raw table of intraday bars, shared by `binance.klines` and `coingecko.price_bars`. */
export const PRICE_BARS_TABLE = {
  name: "raw_price_bars",
  columns: {
    source: "VARCHAR",
    gecko_id: "VARCHAR",
    quote: "VARCHAR",
    date: "VARCHAR",
    ts: "BIGINT",
    interval_sec: "BIGINT",
    open: "DOUBLE",
    high: "DOUBLE",
    low: "DOUBLE",
    close: "DOUBLE",
  },
} as const;
