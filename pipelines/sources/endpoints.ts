import { BINANCE_BASE_URL, BINANCE_PAIRS, binanceKlinesEndpoint, coingeckoPriceBarsArchive } from "./binance.ts";
import { alchemyDailyPricesArchive, onchainSupplySamplesArchive } from "./archives.ts";
import { BLUECHIP_BASE_URL, bluechipRatingsEndpoint } from "./bluechip.ts";
import { COINGECKO_BASE_URL, coinsMarketsEndpoint, marketChartEndpoint } from "./coingecko.ts";
import { CURVE_BASE_URL, curvePoolsEndpoint } from "./curve.ts";
import { DEX_SUBGRAPH_BASE_URL, dexSubgraphPoolsEndpoint } from "./dex-subgraph.ts";
import { DEFILLAMA_YIELDS_BASE_URL, yieldPoolsEndpoint } from "./defillama-yields.ts";
import {
  DEFILLAMA_BASE_URL,
  stablecoinChartsEndpoint,
  stablecoinDetailEndpoint,
  stablecoinPricesEndpoint,
  stablecoinsEndpoint,
} from "./defillama.ts";
import { FRANKFURTER_BASE_URL, fxRatesEndpoint } from "./frankfurter.ts";
import { onchainEventsEndpoint } from "./onchain-events.ts";
import { RESERVE_ADAPTERS, RESERVES_BASE_URL, reserveCompositionEndpoint } from "./reserves.ts";
import type { Endpoint, RawTable } from "./types.ts";
import { usdsStatusEndpoint } from "./usds-status.ts";

/** Every endpoint the build knows, keyed by `<source>.<entity>`. Adding a source = adding it here. */
export const ENDPOINTS: Record<string, Endpoint> = Object.fromEntries(
  [
    stablecoinsEndpoint,
    stablecoinDetailEndpoint,
    stablecoinChartsEndpoint,
    stablecoinPricesEndpoint,
    coinsMarketsEndpoint,
    marketChartEndpoint,
    fxRatesEndpoint,
    alchemyDailyPricesArchive,
    onchainSupplySamplesArchive,
    binanceKlinesEndpoint,
    coingeckoPriceBarsArchive,
    onchainEventsEndpoint,
    bluechipRatingsEndpoint,
    yieldPoolsEndpoint,
    curvePoolsEndpoint,
    dexSubgraphPoolsEndpoint,
    reserveCompositionEndpoint,
    usdsStatusEndpoint,
  ].map((e) => [e.key, e]),
);

/**
 * Freshness window of every endpoint that declares one (`Endpoint.currentWindowSec`), as the rows of
 * the build table `source_current_windows` (endpoint key, its raw table, window in seconds), sorted
 * by endpoint. Models join on `raw_table` (a string literal naming an endpoint key such as
 * `defillama.stablecoins` would read as a dependency on the model of that name). Throws when two
 * endpoints of one raw table declare windows.
 */
export function sourceCurrentWindows(): { endpoint: string; raw_table: string; window_sec: number }[] {
  const rows = Object.values(ENDPOINTS)
    .filter((e) => e.currentWindowSec !== undefined)
    .map((e) => ({ endpoint: e.key, raw_table: e.table.name, window_sec: e.currentWindowSec as number }))
    .sort((a, b) => a.endpoint.localeCompare(b.endpoint));
  const tables = new Set(rows.map((r) => r.raw_table));
  if (tables.size !== rows.length) throw new Error("two endpoints of one raw table declare a freshness window");
  return rows;
}

/** Base URL per live source (circuit name). */
export const SOURCE_BASE_URLS: Record<string, string> = {
  defillama: DEFILLAMA_BASE_URL,
  coingecko: COINGECKO_BASE_URL,
  frankfurter: FRANKFURTER_BASE_URL,
  binance: BINANCE_BASE_URL,
  bluechip: BLUECHIP_BASE_URL,
  "defillama-yields": DEFILLAMA_YIELDS_BASE_URL,
  curve: CURVE_BASE_URL,
  "dex-subgraph": DEX_SUBGRAPH_BASE_URL,
  reserves: RESERVES_BASE_URL,
};

/** Curve registries the live capture reads (`getPools/{chain}/{registry}`); DEX subgraphs need a configured gateway URL and are not in the default plan. */
export const CURVE_REGISTRIES: [string, string][] = [
  ["ethereum", "main"],
  ["ethereum", "factory-stable-ng"],
];

/** Distinct raw tables (several endpoints may share one, e.g. `raw_price_history`). */
export function rawTables(): RawTable[] {
  const seen = new Map<string, RawTable>();
  for (const e of Object.values(ENDPOINTS)) if (!seen.has(e.table.name)) seen.set(e.table.name, e.table);
  return [...seen.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The live capture plan: which endpoint calls `capture` makes. Per-coin detail and market charts
 * are fetched for the registry coins listed in `detailLlamaIds` / `chartGeckoIds`; Bluechip ratings
 * for `bluechipSlugs` (one call per slug); live reserves for every configured reserve adapter (`RESERVE_ADAPTERS`); the USDS status from Ethereum (`usds.status`, read over
 * JSON-RPC: skipped unless `BALLAST_RPC_ETHEREUM` is set).
 */
export function liveCapturePlan(opts: {
  detailLlamaIds: string[];
  chartGeckoIds: string[];
  fxStart: string;
  bluechipSlugs?: string[];
}): { endpoint: string; params: Record<string, string> }[] {
  return [
    { endpoint: "defillama.stablecoins", params: {} },
    { endpoint: "defillama.stablecoincharts", params: { chain: "all" } },
    { endpoint: "defillama.stablecoinprices", params: {} },
    { endpoint: "coingecko.markets", params: {} },
    { endpoint: "defillama-yields.pools", params: {} },
    ...CURVE_REGISTRIES.map(([chain, registry]) => ({ endpoint: "curve.pools", params: { chain, registry } })),
    { endpoint: "frankfurter.rates", params: { base: "EUR", start: opts.fxStart } },
    ...Object.keys(BINANCE_PAIRS).map((symbol) => ({
      endpoint: "binance.klines",
      params: { symbol, interval: "15m" },
    })),
    ...opts.detailLlamaIds.map((id) => ({ endpoint: "defillama.stablecoin", params: { id } })),
    ...opts.chartGeckoIds.map((id) => ({ endpoint: "coingecko.market_chart", params: { id } })),
    ...(opts.bluechipSlugs ?? []).map((slug) => ({ endpoint: "bluechip.ratings", params: { slug } })),
    ...RESERVE_ADAPTERS.map((a) => ({ endpoint: "reserves.composition", params: { stablecoinId: a.stablecoinId } })),
    { endpoint: "usds.status", params: {} },
  ];
}
