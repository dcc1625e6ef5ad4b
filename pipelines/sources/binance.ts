import { z } from "zod";
import { parseJsonText, readCsvRows, ReaderDrops } from "./file-formats.ts";
import { isoDay, RowCollector, toFiniteNumber } from "./parse-helpers.ts";
import type { Capture, Endpoint, ReaderOutput, RowSink, SourceTime } from "./types.ts";

/**
 * Binance spot REST API. Klines wire format: `[openTime ms, open, high, low, close, volume, closeTime ms, …]`,
 * times epoch ms UTC, prices in quote-coin units.
 */
export const BINANCE_BASE_URL = "https://api.binance.com/";

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
// Recorded-file readers for the intraday bar endpoints.

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
