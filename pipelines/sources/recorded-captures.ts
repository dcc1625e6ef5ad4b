import Papa from "papaparse";

/**
 * Capture readers for the real recorded inputs in `../shared/data` (see its MANIFEST.md). Each
 * reader is named for the file format it reads and turns the file into the payload the live
 * upstream endpoint would have returned, so live and recorded captures share one parser.
 */

/** What a reader yields: one payload per (endpoint params) plus counted skips. */
export interface ReaderOutput {
  captures: { params: Record<string, string>; payload: unknown }[];
  dropped: Record<string, number>;
}

/** A recorded file and how to read it. `observedAt` is Unix seconds (the recording date). */
export interface RecordedCapture {
  endpoint: string;
  file: string;
  observedAt: number;
  params?: Record<string, string>;
  read: (text: string) => ReaderOutput;
}

/** Unix seconds of the UTC day of an ISO date or `YYYY-MM-DD hh:mm:ss` timestamp. */
const day = (iso: string) => Date.parse(`${iso.slice(0, 10)}T00:00:00Z`) / 1000;

function csvRows(text: string): Record<string, string>[] {
  const clean = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return Papa.parse<Record<string, string>>(clean, { header: true, skipEmptyLines: true }).data;
}

/** The upstream JSON file as-is. */
export function readJsonFile(params: Record<string, string> = {}) {
  return (text: string): ReaderOutput => ({ captures: [{ params, payload: JSON.parse(text) }], dropped: {} });
}

/**
 * DefiLlama chart CSV written from `/stablecoincharts/{chain}`: a date column plus total USD
 * (and optionally total units) columns, no peg breakdown → peg key `total`.
 */
export function readDefillamaChartCsv(chain: string, usdColumn: string, unitsColumn?: string) {
  return (text: string): ReaderOutput => {
    const payload = csvRows(text).map((r) => ({
      date: String(day((r.Date ?? r.date ?? "").slice(0, 10))),
      totalCirculatingUSD: { total: r[usdColumn] },
      ...(unitsColumn ? { totalCirculating: { total: r[unitsColumn] } } : {}),
    }));
    return { captures: [{ params: { chain }, payload }], dropped: {} };
  };
}

/** DefiLlama `/stablecoinprices` written as a wide CSV: Date + one column per CoinGecko id. */
export function readDefillamaPricesWideCsv(text: string): ReaderOutput {
  const payload = csvRows(text).map((r) => {
    const prices: Record<string, string> = {};
    for (const [k, v] of Object.entries(r)) if (k !== "Date" && v !== "") prices[k] = v;
    return { date: day(r.Date), prices };
  });
  return { captures: [{ params: {}, payload }], dropped: {} };
}

/**
 * DefiLlama `/stablecoin/{id}` per-chain history written as a wide CSV: Date + `<Chain>_Circulating`
 * columns (native units of the coin's peg).
 */
export function readDefillamaChainWideCsv(llamaId: string, pegType: string) {
  return (text: string): ReaderOutput => {
    const chainBalances: Record<string, { tokens: unknown[] }> = {};
    for (const r of csvRows(text)) {
      const date = day(r.Date);
      for (const [col, v] of Object.entries(r)) {
        const m = /^(.*)_Circulating$/.exec(col);
        if (!m || v === "" || v === undefined) continue;
        (chainBalances[m[1]] ??= { tokens: [] }).tokens.push({ date, circulating: { [pegType]: v } });
      }
    }
    return { captures: [{ params: { id: llamaId }, payload: { id: llamaId, chainBalances } }], dropped: {} };
  };
}

/** CoinGecko daily chart export CSV (`snapped_at, price, market_cap, total_volume`) → market_chart payload. */
export function readCoingeckoChartExportCsv(geckoId: string) {
  return (text: string): ReaderOutput => {
    const rows = csvRows(text);
    const ms = (r: Record<string, string>) => Date.parse(r.snapped_at.replace(" UTC", "Z").replace(" ", "T"));
    return {
      captures: [{
        params: { id: geckoId },
        payload: {
          prices: rows.map((r) => [ms(r), r.price]),
          market_caps: rows.map((r) => [ms(r), r.market_cap]),
          total_volumes: rows.map((r) => [ms(r), r.total_volume]),
        },
      }],
      dropped: {},
    };
  };
}

/**
 * Market caps scraped from CoinGecko charts (`date, coin_name, market_cap`, UTF-8 BOM) → one
 * market_chart payload per mapped coin; rows of unmapped coin names are counted, not loaded.
 */
export function readCoingeckoMarketCapScrapeCsv(nameToGeckoId: Record<string, string>) {
  return (text: string): ReaderOutput => {
    const series = new Map<string, [number, string][]>();
    const dropped: Record<string, number> = {};
    for (const r of csvRows(text)) {
      const gecko = nameToGeckoId[r.coin_name];
      if (!gecko) { dropped["coin-name-unmapped"] = (dropped["coin-name-unmapped"] ?? 0) + 1; continue; }
      const list = series.get(gecko) ?? [];
      list.push([Date.parse(`${r.date.slice(0, 10)}T00:00:00Z`), r.market_cap]);
      series.set(gecko, list);
    }
    return {
      captures: [...series.entries()].sort(([a], [b]) => a.localeCompare(b))
        .map(([id, market_caps]) => ({ params: { id }, payload: { market_caps } })),
      dropped,
    };
  };
}

/** Alchemy daily price CSV (`timestamp, price`). */
export function readAlchemyPriceCsv(geckoId: string) {
  return (text: string): ReaderOutput => ({
    captures: [{ params: { id: geckoId }, payload: { geckoId, points: csvRows(text).map((r) => ({ date: r.timestamp, price: r.price })) } }],
    dropped: {},
  });
}

/** On-chain totalSupply sample CSV (`address, symbol, block, supply, ts`). */
export function readTotalSupplySampleCsv(chainId: string, decimals: number) {
  return (text: string): ReaderOutput => ({
    captures: [{ params: { chain: chainId }, payload: { chainId, decimals, rows: csvRows(text) } }],
    dropped: {},
  });
}

/**
 * ECB `eurofxref-hist.csv` (Date + one column per currency, units per EUR, `N/A` when missing,
 * trailing comma) → Frankfurter time-series payload with base EUR.
 */
export function readEcbHistCsv(text: string): ReaderOutput {
  const rates: Record<string, Record<string, string>> = {};
  for (const r of csvRows(text)) {
    const quotes: Record<string, string> = {};
    for (const [k, v] of Object.entries(r)) if (k && k !== "Date" && v && v !== "N/A") quotes[k] = v;
    rates[r.Date] = quotes;
  }
  return { captures: [{ params: { base: "EUR" }, payload: { base: "EUR", rates } }], dropped: {} };
}

const MARKET_CAP_SCRAPE_NAMES: Record<string, string> = {
  "Tether": "tether", "USDC": "usd-coin", "Dai": "dai", "USDS": "usds", "Ethena USDe": "ethena-usde",
  "PayPal USD": "paypal-usd", "USD1": "usd1-wlfi", "Falcon USD": "falcon-finance", "Global Dollar": "global-dollar",
  "Ripple USD": "ripple-usd", "USDD": "usdd", "Usdd": "usdd",
};

/** Binance kline CSV (no header: open_time ms, open, high, low, close, volume, close_time ms, …) → klines payload. */
export function readBinanceKlinesCsv(symbol: string, interval: string) {
  return (text: string): ReaderOutput => ({
    captures: [{ params: { symbol, interval }, payload: Papa.parse<string[]>(text.trim(), { header: false, skipEmptyLines: true }).data }],
    dropped: {},
  });
}

/** Recorded `{meta, data: [{dt, o, h, l, c, v}]}` range bars of one coin → price_bars payload. */
export function readCoingeckoRangeBarsJson(geckoId: string, intervalSec: number) {
  return (text: string): ReaderOutput => {
    const doc = JSON.parse(text) as { data?: unknown[] };
    return { captures: [{ params: { id: geckoId }, payload: { geckoId, intervalSec, bars: doc.data ?? [] } }], dropped: {} };
  };
}

/** Every recorded input the embedded default build reads, relative to BALLAST_CAPTURE_DIR. */
export const RECORDED_CAPTURES: RecordedCapture[] = [
  { endpoint: "defillama.stablecoins", file: "zacheryglass-stablecoinwatch/defillama_raw_output.json", observedAt: day("2025-09-07"), read: readJsonFile() },
  { endpoint: "coingecko.markets", file: "zacheryglass-stablecoinwatch/coingecko_raw_output.json", observedAt: Date.parse("2025-09-11T18:10:16Z") / 1000, read: readJsonFile() },
  { endpoint: "defillama.stablecoincharts", file: "check-sked-crypto-data-resources/total_stablecoins_all_chains.csv", observedAt: day("2023-07-31"), read: readDefillamaChartCsv("all", "Total Circulating ($)", "Total Circulating (Stablecoin Units)") },
  { endpoint: "defillama.stablecoincharts", file: "check-sked-crypto-data-resources/Ethereum_USD_stablecoin_supply.csv", observedAt: day("2023-07-31"), read: readDefillamaChartCsv("Ethereum", "total_circulating_usd") },
  { endpoint: "defillama.stablecoinprices", file: "check-sked-crypto-data-resources/stablecoin_prices.csv", observedAt: day("2023-07-31"), read: readDefillamaPricesWideCsv },
  { endpoint: "defillama.stablecoin", file: "check-sked-crypto-data-resources/stablecoin_USDC_circulating_by_chain.csv", observedAt: day("2023-08-01"), read: readDefillamaChainWideCsv("2", "peggedUSD") },
  { endpoint: "coingecko.market_chart", file: "bhemen-crypto-insights/coingecko-usdc-usdt/usdt_history.csv", observedAt: day("2024-07-24"), read: readCoingeckoChartExportCsv("tether") },
  { endpoint: "coingecko.market_chart", file: "bhemen-crypto-insights/coingecko-usdc-usdt/usdc_history.csv", observedAt: day("2024-07-24"), read: readCoingeckoChartExportCsv("usd-coin") },
  { endpoint: "coingecko.market_chart", file: "partrita-stablecoin-tracker/stablecoin_marketcap.csv", observedAt: day("2026-08-22"), read: readCoingeckoMarketCapScrapeCsv(MARKET_CAP_SCRAPE_NAMES) },
  ...(["USDT:tether", "USDC:usd-coin", "DAI:dai", "USDe:ethena-usde", "USDS:usds"].map((s) => {
    const [file, gecko] = s.split(":");
    return { endpoint: "alchemy.daily_prices", file: `bhemen-crypto-insights/stablecoin_prices/${file}.csv`, observedAt: day("2025-02-21"), read: readAlchemyPriceCsv(gecko) };
  })),
  ...(["BSC-USD", "BUSD", "FDUSD", "USDC"].map((f) => ({
    endpoint: "onchain.total_supply_samples", file: `bhemen-crypto-insights/bnb-supply/${f}.csv`, observedAt: day("2025-01-24"), read: readTotalSupplySampleCsv("bsc", 18),
  }))),
  { endpoint: "frankfurter.rates", file: "ecb-eurofxref/eurofxref-hist.csv", observedAt: day("2025-05-11"), read: readEcbHistCsv },
  ...Array.from({ length: 10 }, (_, i) => `2023-03-${String(11 + i).padStart(2, "0")}`).map((d) => ({
    endpoint: "binance.klines", file: `binance-vision-usdc-svb-2023/USDCUSDT-1m-${d}.csv`, observedAt: day(d) + 86400, read: readBinanceKlinesCsv("USDCUSDT", "1m"),
  })),
  { endpoint: "coingecko.price_bars", file: "bertrandbuild-stablesafe/data_usdc_large_depeg_2023.json", observedAt: day("2023-03-19"), read: readCoingeckoRangeBarsJson("usd-coin", 900) },
];
