import { readJsonFile } from "../file-formats.ts";
import { INTRADAY_BAR_TIME } from "../price-bars.ts";
import { SNAPSHOT_TIME, utcDayStart } from "../time.ts";
import type { SourceDeclaration } from "../types.ts";
import {
  COINGECKO_BASE_URL,
  COINGECKO_EXPORT_TIME,
  COINGECKO_SCRAPE_TIME,
  coinsMarketsEndpoint,
  marketChartEndpoint,
  readCoingeckoChartExportCsv,
  readCoingeckoMarketCapScrapeCsv,
} from "./coingecko.ts";
import { coingeckoPriceBarsArchive, readCoingeckoRangeBarsJson } from "./price-bars.ts";

/** The partrita market-cap scrape's `coin_name` values → CoinGecko ids (MANIFEST §5 lists the 11 coins). */
export const MARKET_CAP_SCRAPE_NAMES: Record<string, string> = {
  Tether: "tether",
  USDC: "usd-coin",
  Dai: "dai",
  USDS: "usds",
  "Ethena USDe": "ethena-usde",
  "PayPal USD": "paypal-usd",
  USD1: "usd1-wlfi",
  "Falcon USD": "falcon-finance",
  "Global Dollar": "global-dollar",
  "Ripple USD": "ripple-usd",
  USDD: "usdd",
  Usdd: "usdd",
};

/** Unix seconds of 2023-03-11 00:00 UTC (the bad-row fixtures' day). */
const SVB_DAY = utcDayStart("2023-03-11");

/**
 * CoinGecko: the live `/coins/markets` list and per-coin market charts; recorded markets response,
 * chart exports, the partrita market-cap scrape and USDC range bars of the SVB week.
 */
export const coingeckoSource: SourceDeclaration = {
  kind: "source",
  name: "coingecko",
  endpoints: [coinsMarketsEndpoint, marketChartEndpoint, coingeckoPriceBarsArchive],
  baseUrl: COINGECKO_BASE_URL,
  livePlan: (opts) => [
    { endpoint: "coingecko.markets", params: {} },
    ...opts.chartGeckoIds.map((id) => ({ endpoint: "coingecko.market_chart", params: { id } })),
  ],
  recorded: [
    {
      endpoint: "coingecko.markets",
      file: "zacheryglass-stablecoinwatch/coingecko_raw_output.json",
      observedAt: Date.parse("2025-09-11T18:10:16Z") / 1000,
      time: SNAPSHOT_TIME,
      read: readJsonFile(),
    },
    {
      endpoint: "coingecko.market_chart",
      file: "bhemen-crypto-insights/coingecko-usdc-usdt/usdt_history.csv",
      observedAt: utcDayStart("2024-07-24"),
      time: COINGECKO_EXPORT_TIME,
      read: readCoingeckoChartExportCsv("tether", COINGECKO_EXPORT_TIME.zone),
    },
    {
      endpoint: "coingecko.market_chart",
      file: "bhemen-crypto-insights/coingecko-usdc-usdt/usdc_history.csv",
      observedAt: utcDayStart("2024-07-24"),
      time: COINGECKO_EXPORT_TIME,
      read: readCoingeckoChartExportCsv("usd-coin", COINGECKO_EXPORT_TIME.zone),
    },
    {
      endpoint: "coingecko.market_chart",
      file: "partrita-stablecoin-tracker/stablecoin_marketcap.csv",
      observedAt: utcDayStart("2026-08-22"),
      time: COINGECKO_SCRAPE_TIME,
      read: readCoingeckoMarketCapScrapeCsv(MARKET_CAP_SCRAPE_NAMES, COINGECKO_SCRAPE_TIME.zone),
    },
    {
      endpoint: "coingecko.price_bars",
      file: "bertrandbuild-stablesafe/data_usdc_large_depeg_2023.json",
      observedAt: utcDayStart("2023-03-19"),
      time: INTRADAY_BAR_TIME,
      read: readCoingeckoRangeBarsJson("usd-coin", 900),
    },
  ],
  badRows: {
    "coingecko.markets": {
      payload: [
        { id: "tether", symbol: "usdt", current_price: 1, market_cap: 1, total_volume: 1, circulating_supply: 1 },
        [],
      ],
    },
    "coingecko.market_chart": {
      payload: { prices: [[SVB_DAY * 1000, 0.97], [1], "x"] },
      params: { id: "usd-coin" },
    },
    "coingecko.price_bars": {
      payload: {
        geckoId: "usd-coin",
        intervalSec: 900,
        bars: [{ dt: "2023-03-11T09:45:00.000Z", o: 1, h: 1, l: 1, c: 1 }, { o: 1 }, 5],
      },
    },
  },
};
