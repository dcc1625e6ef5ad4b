import { BINANCE_BASE_URL, BINANCE_PAIRS, binanceKlinesEndpoint, coingeckoPriceBarsArchive } from "./binance.ts";
import { alchemyDailyPricesArchive, onchainSupplySamplesArchive } from "./archives.ts";
import { BLUECHIP_BASE_URL, bluechipRatingsEndpoint } from "./bluechip.ts";
import { COINGECKO_BASE_URL, coinsMarketsEndpoint, marketChartEndpoint } from "./coingecko.ts";
import { DEFILLAMA_BASE_URL, stablecoinChartsEndpoint, stablecoinDetailEndpoint, stablecoinPricesEndpoint, stablecoinsEndpoint } from "./defillama.ts";
import { FRANKFURTER_BASE_URL, fxRatesEndpoint } from "./frankfurter.ts";
import { onchainEventsEndpoint } from "./onchain-events.ts";
import type { Endpoint, RawTable } from "./types.ts";
import { usdsStatusEndpoint } from "./usds-status.ts";

/** Every endpoint the build knows, keyed by `<source>.<entity>`. Adding a source = adding it here. */
export const ENDPOINTS: Record<string, Endpoint> = Object.fromEntries(
  [
    stablecoinsEndpoint, stablecoinDetailEndpoint, stablecoinChartsEndpoint, stablecoinPricesEndpoint,
    coinsMarketsEndpoint, marketChartEndpoint, fxRatesEndpoint, alchemyDailyPricesArchive, onchainSupplySamplesArchive,
    binanceKlinesEndpoint, coingeckoPriceBarsArchive, onchainEventsEndpoint, bluechipRatingsEndpoint, usdsStatusEndpoint,
  ].map((e) => [e.key, e]),
);

/** Base URL per live source (circuit name). */
export const SOURCE_BASE_URLS: Record<string, string> = {
  defillama: DEFILLAMA_BASE_URL,
  coingecko: COINGECKO_BASE_URL,
  frankfurter: FRANKFURTER_BASE_URL,
  binance: BINANCE_BASE_URL,
  bluechip: BLUECHIP_BASE_URL,
};

/** Distinct raw tables (several endpoints may share one, e.g. `raw_price_history`). */
export function rawTables(): RawTable[] {
  const seen = new Map<string, RawTable>();
  for (const e of Object.values(ENDPOINTS)) if (!seen.has(e.table.name)) seen.set(e.table.name, e.table);
  return [...seen.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The live capture plan: which endpoint calls `capture` makes. Per-coin detail and market charts
 * are fetched for the registry coins listed in `detailLlamaIds` / `chartGeckoIds`; Bluechip ratings
 * for `bluechipSlugs` (one call per slug); the USDS status from Ethereum (`usds.status`, read over
 * JSON-RPC: skipped unless `BALLAST_RPC_ETHEREUM` is set).
 */
export function liveCapturePlan(opts: { detailLlamaIds: string[]; chartGeckoIds: string[]; fxStart: string; bluechipSlugs?: string[] }): { endpoint: string; params: Record<string, string> }[] {
  return [
    { endpoint: "defillama.stablecoins", params: {} },
    { endpoint: "defillama.stablecoincharts", params: { chain: "all" } },
    { endpoint: "defillama.stablecoinprices", params: {} },
    { endpoint: "coingecko.markets", params: {} },
    { endpoint: "frankfurter.rates", params: { base: "EUR", start: opts.fxStart } },
    ...Object.keys(BINANCE_PAIRS).map((symbol) => ({ endpoint: "binance.klines", params: { symbol, interval: "15m" } })),
    ...opts.detailLlamaIds.map((id) => ({ endpoint: "defillama.stablecoin", params: { id } })),
    ...opts.chartGeckoIds.map((id) => ({ endpoint: "coingecko.market_chart", params: { id } })),
    ...(opts.bluechipSlugs ?? []).map((slug) => ({ endpoint: "bluechip.ratings", params: { slug } })),
    { endpoint: "usds.status", params: {} },
  ];
}
