import { z } from "zod";
import { readCsvRows, ReaderDrops } from "../file-formats.ts";
import { isoDay, RowCollector, toFiniteNumber } from "../parse-helpers.ts";
import { INTRADAY_BAR_TIME, PRICE_BARS_TABLE, PriceBarRow } from "../price-bars.ts";
import type { Endpoint, ReaderOutput } from "../types.ts";

/**
 * Binance spot REST API. Klines wire format: `[openTime ms, open, high, low, close, volume, closeTime ms, …]`,
 * times epoch ms UTC, prices in quote-coin units.
 */
export const BINANCE_BASE_URL = "https://api.binance.com/";

/** Binance spot pairs we read, by symbol: priced coin (CoinGecko id) and quote coin. */
export const BINANCE_PAIRS: Record<string, { geckoId: string; quote: string }> = {
  USDCUSDT: { geckoId: "usd-coin", quote: "USDT" },
  FDUSDUSDT: { geckoId: "first-digital-usd", quote: "USDT" },
};

/** A parsed price that is present and above zero (toFiniteNumber never yields NaN). */
const positive = (v: number | null | undefined): v is number => v !== undefined && v !== null && v > 0;

const INTERVAL_SEC: Record<string, number> = { "1m": 60, "5m": 300, "15m": 900, "1h": 3600 };

/**
 * `GET /api/v3/klines?symbol=S&interval=I&limit=1000` — CEX candles (category `CEX` in depeg
 * confirmation). Params: `symbol` (a key of BINANCE_PAIRS), `interval` (`1m`…`1h`). `ts` = close
 * time + 1 ms in Unix s (UTC). A row that is not an array of ≥ 7 fields (`kline-row-invalid`),
 * has a non-positive or non-finite price, or high < low is dropped and counted; the rest load.
 */
export const binanceKlinesEndpoint: Endpoint = {
  key: "binance.klines",
  source: "binance",
  lineage: { family: "binance", derivedFrom: null },
  time: INTRADAY_BAR_TIME,
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: 3600,
  payloadSchema: z.array(z.unknown()),
  rowSchema: PriceBarRow,
  table: { name: PRICE_BARS_TABLE.name, columns: { ...PRICE_BARS_TABLE.columns } },
  toRows(payload: unknown[], capture, out) {
    const rc = new RowCollector(PriceBarRow, out);
    const pair = BINANCE_PAIRS[capture.params.symbol ?? ""];
    const interval = INTERVAL_SEC[capture.params.interval ?? ""];
    if (!pair || !interval) {
      rc.drop("unknown-pair-or-interval", payload.length);
      return rc.result();
    }
    for (const k of payload) {
      if (!Array.isArray(k) || k.length < 7) {
        rc.drop("kline-row-invalid");
        continue;
      }
      const [open, high, low, close] = [k[1], k[2], k[3], k[4]].map(toFiniteNumber);
      const closeTimeMs = toFiniteNumber(k[6]);
      if (!positive(open) || !positive(high) || !positive(low) || !positive(close)) {
        rc.drop("price-non-positive-or-nan");
        continue;
      }
      if (closeTimeMs === undefined || closeTimeMs === null) {
        rc.drop("close-time-invalid");
        continue;
      }
      if (high < low) {
        rc.drop("high-below-low");
        continue;
      }
      const ts = Math.round((closeTimeMs + 1) / 1000);
      rc.add({
        source: "binance",
        gecko_id: pair.geckoId,
        quote: pair.quote,
        date: isoDay(ts),
        ts,
        interval_sec: interval,
        open,
        high,
        low,
        close,
      });
    }
    return rc.result();
  },
  fetchLive: (client, params) =>
    client.getJson(
      `api/v3/klines?symbol=${encodeURIComponent(params.symbol)}&interval=${encodeURIComponent(params.interval)}&limit=1000`,
    ),
};

// ---------------------------------------------------------------------------------------------
// Recorded-file readers.

/**
 * Binance kline CSV (data.binance.vision; no header: open_time ms UTC, open, high, low, close,
 * volume, close_time ms UTC, …) → klines payload (the REST array of arrays, values as text).
 * A row whose width differs from the first row's, or that papaparse flags, is dropped as
 * `csv-parse-error` with its line.
 */
export function readBinanceKlinesCsv(symbol: string, interval: string) {
  return (text: string): ReaderOutput => {
    const drops = new ReaderDrops();
    const payload = readCsvRows(text, drops, { header: false });
    return drops.output([{ params: { symbol, interval }, payload }]);
  };
}
