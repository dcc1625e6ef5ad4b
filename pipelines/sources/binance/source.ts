import { INTRADAY_BAR_TIME } from "../price-bars.ts";
import { utcDayStart } from "../time.ts";
import type { RecordedCapture, SourceDeclaration } from "../types.ts";
import { BINANCE_BASE_URL, BINANCE_PAIRS, binanceKlinesEndpoint, readBinanceKlinesCsv } from "./binance.ts";

/**
 * Binance spot klines: live 15-minute bars of every pair of BINANCE_PAIRS; recorded 1-minute USDC/USDT
 * bars of the SVB week (data.binance.vision, 2023-03-11..20, MANIFEST).
 */
export const binanceSource: SourceDeclaration = {
  kind: "source",
  name: "binance",
  endpoints: [binanceKlinesEndpoint],
  baseUrl: BINANCE_BASE_URL,
  livePlan: () =>
    Object.keys(BINANCE_PAIRS).map((symbol) => ({ endpoint: "binance.klines", params: { symbol, interval: "15m" } })),
  recorded: Array.from({ length: 10 }, (_, i) => `2023-03-${String(11 + i).padStart(2, "0")}`).map(
    (d): RecordedCapture => ({
      endpoint: "binance.klines",
      file: `binance-vision-usdc-svb-2023/USDCUSDT-1m-${d}.csv`,
      observedAt: utcDayStart(d) + 86400,
      time: INTRADAY_BAR_TIME,
      read: readBinanceKlinesCsv("USDCUSDT", "1m"),
    }),
  ),
  badRows: {
    "binance.klines": {
      payload: [[1678543200000, "1", "1", "0.9", "0.95", "1", 1678543259999], [1]],
      params: { symbol: "USDCUSDT", interval: "1m" },
    },
  },
};
