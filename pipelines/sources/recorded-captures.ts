import { readAlchemyPriceCsv, readTotalSupplySampleCsv } from "./archives.ts";
import { INTRADAY_BAR_TIME, readBinanceKlinesCsv, readCoingeckoRangeBarsJson } from "./binance.ts";
import {
  COINGECKO_EXPORT_TIME,
  COINGECKO_SCRAPE_TIME,
  readCoingeckoChartExportCsv,
  readCoingeckoMarketCapScrapeCsv,
} from "./coingecko.ts";
import { OPEN_DEFI_YIELDS_TIME, readOpenDefiYieldsCsv } from "./defillama-yields.ts";
import {
  DEFILLAMA_ARCHIVE_TIME,
  readDefillamaChainWideCsv,
  readDefillamaChartCsv,
  readDefillamaPricesWideCsv,
  OPEN_DEFI_STABLECOINS_TIME,
  readOpenDefiStablecoinsJson,
} from "./defillama.ts";
import { parseJsonText } from "./file-formats.ts";
import { ECB_TIME, readEcbHistCsv } from "./frankfurter.ts";
import { onchainEventsEndpoint, readBhemenUsdpCsv, readBhemenUsdtCsv, readPyusdSupplyCsv } from "./onchain-events.ts";
import type { ReaderOutput, SourceTime } from "./types.ts";

/**
 * The real recorded inputs in `../shared/data` (see its MANIFEST.md, incl. "Time zones and
 * lineage") and which reader turns each into the payload the live upstream endpoint would have
 * returned, so live and recorded captures share one parser. The readers live beside their source
 * (defillama.ts, coingecko.ts, binance.ts, archives.ts, frankfurter.ts) and are re-exported here.
 */

export type { ReaderOutput, ReaderProblem } from "./types.ts";
export { readAlchemyPriceCsv, readTotalSupplySampleCsv } from "./archives.ts";
export { readBinanceKlinesCsv, readCoingeckoRangeBarsJson } from "./binance.ts";
export { readCoingeckoChartExportCsv, readCoingeckoMarketCapScrapeCsv } from "./coingecko.ts";
export { readOpenDefiYieldsCsv } from "./defillama-yields.ts";
export {
  readDefillamaChainWideCsv,
  readDefillamaChartCsv,
  readDefillamaPricesWideCsv,
  readOpenDefiStablecoinsJson,
} from "./defillama.ts";
export { readEcbHistCsv } from "./frankfurter.ts";
export { readBhemenUsdpCsv, readBhemenUsdtCsv, readPyusdSupplyCsv } from "./onchain-events.ts";

/**
 * A recorded file and how to read it. `observedAt` is Unix seconds (the recording date, UTC);
 * `time` declares the zone of the file's time labels and how its rows map to UTC days (the reader
 * is built with the same zone).
 */
export interface RecordedCapture {
  endpoint: string;
  file: string;
  observedAt: number;
  params?: Record<string, string>;
  time: SourceTime;
  /**
   * True for the inputs without which the build publishes nothing meaningful (the coin list and the
   * all-chain supply history): an empty file fails the build like a missing one. Other captures are
   * optional: an empty one is skipped, named in the manifest (`skippedCaptures`) and in health.
   */
  required?: boolean;
  /** Throws (e.g. a JsonPositionError) when the file cannot be read at all. */
  read: (text: string) => ReaderOutput;
}

/** Unix seconds of 00:00 UTC of a `YYYY-MM-DD` date. */
const day = (iso: string) => Date.parse(`${iso.slice(0, 10)}T00:00:00Z`) / 1000;

/** The upstream JSON file as-is. Invalid JSON throws a JsonPositionError naming line/column/offset. */
export function readJsonFile(params: Record<string, string> = {}) {
  return (text: string): ReaderOutput => ({ captures: [{ params, payload: parseJsonText(text) }], dropped: {} });
}

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

const SNAPSHOT_TIME: SourceTime = { zone: "UTC", dailyBucket: "snapshot at observedAt (no daily points)" };
const UTC_DAY_ROWS: SourceTime = { zone: "UTC", dailyBucket: "00:00 UTC point (one row per UTC day)" };
const SAMPLE_TIME: SourceTime = { zone: "UTC", dailyBucket: "intraday sample; date = UTC day of block time" };
const NY = DEFILLAMA_ARCHIVE_TIME.zone;

/** open-defi-data's yields head sample: every row's `scrapedAt` is 2026-09-02T11:57:41.317Z (MANIFEST §9), observed to the second. */
const OPEN_DEFI_YIELDS_OBSERVED_AT = Math.floor(Date.parse("2026-09-02T11:57:41.317Z") / 1000);

/**
 * open-defi-data's normalised DefiLlama list of 2026-09-02 (MANIFEST §13): its newest `scrapedAt` is
 * 2026-09-02T11:57:40.725Z, rounded UP to the second so a build as of 11:57:40Z does not see it.
 */
const OPEN_DEFI_STABLECOINS_OBSERVED_AT = Math.ceil(Date.parse("2026-09-02T11:57:40.725Z") / 1000);

/** Every recorded input the embedded default build reads, relative to BALLAST_CAPTURE_DIR. */
export const RECORDED_CAPTURES: RecordedCapture[] = [
  {
    endpoint: "defillama.stablecoins",
    file: "zacheryglass-stablecoinwatch/defillama_raw_output.json",
    observedAt: day("2025-09-07"),
    time: SNAPSHOT_TIME,
    required: true,
    read: readJsonFile(),
  },
  // The same endpoint a year later (snapshot mode: the newest list observed at or before as-of is read).
  {
    endpoint: "defillama.stablecoins",
    file: "conorscode-open-defi-data/stablecoins.2026-09-02.json",
    observedAt: OPEN_DEFI_STABLECOINS_OBSERVED_AT,
    time: OPEN_DEFI_STABLECOINS_TIME,
    read: readOpenDefiStablecoinsJson(OPEN_DEFI_STABLECOINS_OBSERVED_AT),
  },
  {
    endpoint: "coingecko.markets",
    file: "zacheryglass-stablecoinwatch/coingecko_raw_output.json",
    observedAt: Date.parse("2025-09-11T18:10:16Z") / 1000,
    time: SNAPSHOT_TIME,
    read: readJsonFile(),
  },
  {
    endpoint: "defillama.stablecoincharts",
    file: "check-sked-crypto-data-resources/total_stablecoins_all_chains.csv",
    observedAt: day("2023-07-31"),
    time: DEFILLAMA_ARCHIVE_TIME,
    required: true,
    read: readDefillamaChartCsv("all", NY, "Total Circulating ($)", "Total Circulating (Stablecoin Units)"),
  },
  {
    endpoint: "defillama.stablecoincharts",
    file: "check-sked-crypto-data-resources/Ethereum_USD_stablecoin_supply.csv",
    observedAt: day("2023-07-31"),
    time: DEFILLAMA_ARCHIVE_TIME,
    read: readDefillamaChartCsv("Ethereum", NY, "total_circulating_usd"),
  },
  {
    endpoint: "defillama.stablecoinprices",
    file: "check-sked-crypto-data-resources/stablecoin_prices.csv",
    observedAt: day("2023-07-31"),
    time: DEFILLAMA_ARCHIVE_TIME,
    read: readDefillamaPricesWideCsv(NY),
  },
  {
    endpoint: "defillama.stablecoin",
    file: "check-sked-crypto-data-resources/stablecoin_USDC_circulating_by_chain.csv",
    observedAt: day("2023-08-01"),
    time: DEFILLAMA_ARCHIVE_TIME,
    read: readDefillamaChainWideCsv("2", "peggedUSD", NY),
  },
  {
    endpoint: "coingecko.market_chart",
    file: "bhemen-crypto-insights/coingecko-usdc-usdt/usdt_history.csv",
    observedAt: day("2024-07-24"),
    time: COINGECKO_EXPORT_TIME,
    read: readCoingeckoChartExportCsv("tether", COINGECKO_EXPORT_TIME.zone),
  },
  {
    endpoint: "coingecko.market_chart",
    file: "bhemen-crypto-insights/coingecko-usdc-usdt/usdc_history.csv",
    observedAt: day("2024-07-24"),
    time: COINGECKO_EXPORT_TIME,
    read: readCoingeckoChartExportCsv("usd-coin", COINGECKO_EXPORT_TIME.zone),
  },
  {
    endpoint: "coingecko.market_chart",
    file: "partrita-stablecoin-tracker/stablecoin_marketcap.csv",
    observedAt: day("2026-08-22"),
    time: COINGECKO_SCRAPE_TIME,
    read: readCoingeckoMarketCapScrapeCsv(MARKET_CAP_SCRAPE_NAMES, COINGECKO_SCRAPE_TIME.zone),
  },
  ...["USDT:tether", "USDC:usd-coin", "DAI:dai", "USDe:ethena-usde", "USDS:usds"].map((s): RecordedCapture => {
    const [file, gecko] = s.split(":");
    return {
      endpoint: "alchemy.daily_prices",
      file: `bhemen-crypto-insights/stablecoin_prices/${file}.csv`,
      observedAt: day("2025-02-21"),
      time: UTC_DAY_ROWS,
      read: readAlchemyPriceCsv(gecko),
    };
  }),
  ...["BSC-USD", "BUSD", "FDUSD", "USDC"].map(
    (f): RecordedCapture => ({
      endpoint: "onchain.total_supply_samples",
      file: `bhemen-crypto-insights/bnb-supply/${f}.csv`,
      observedAt: day("2025-01-24"),
      time: SAMPLE_TIME,
      read: readTotalSupplySampleCsv("bsc", 18),
    }),
  ),
  {
    endpoint: "frankfurter.rates",
    file: "ecb-eurofxref/eurofxref-hist.csv",
    observedAt: day("2025-05-11"),
    time: ECB_TIME,
    read: readEcbHistCsv,
  },
  ...Array.from({ length: 10 }, (_, i) => `2023-03-${String(11 + i).padStart(2, "0")}`).map(
    (d): RecordedCapture => ({
      endpoint: "binance.klines",
      file: `binance-vision-usdc-svb-2023/USDCUSDT-1m-${d}.csv`,
      observedAt: day(d) + 86400,
      time: INTRADAY_BAR_TIME,
      read: readBinanceKlinesCsv("USDCUSDT", "1m"),
    }),
  ),
  {
    endpoint: "coingecko.price_bars",
    file: "bertrandbuild-stablesafe/data_usdc_large_depeg_2023.json",
    observedAt: day("2023-03-19"),
    time: INTRADAY_BAR_TIME,
    read: readCoingeckoRangeBarsJson("usd-coin", 900),
  },
  // DefiLlama `/pools` head sample (104 pools, symbols only: no token addresses, no volumes).
  {
    endpoint: "defillama-yields.pools",
    file: "open-defi-data/yields.head.csv",
    observedAt: OPEN_DEFI_YIELDS_OBSERVED_AT,
    time: OPEN_DEFI_YIELDS_TIME,
    read: readOpenDefiYieldsCsv(OPEN_DEFI_YIELDS_OBSERVED_AT),
  },
  // Decoded on-chain logs (observedAt = the recording's commit date; rows count from their block time).
  {
    endpoint: "onchain.events",
    file: "bhemen-usdt/usdt_configs.csv",
    observedAt: day("2023-07-11"),
    time: onchainEventsEndpoint.time,
    read: readBhemenUsdtCsv,
  },
  {
    endpoint: "onchain.events",
    file: "bhemen-paxos-coins/usdp_configs.csv",
    observedAt: day("2022-11-20"),
    time: onchainEventsEndpoint.time,
    read: readBhemenUsdpCsv,
  },
  {
    endpoint: "onchain.events",
    file: "bhemen-crypto-insights/pyusd/pyusd_supply_events.csv",
    observedAt: day("2025-11-15"),
    time: onchainEventsEndpoint.time,
    read: readPyusdSupplyCsv,
  },
];
