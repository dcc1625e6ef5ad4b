import { readJsonFile } from "../file-formats.ts";
import { SNAPSHOT_TIME, utcDayStart } from "../time.ts";
import type { CaptureStep, SourceDeclaration } from "../types.ts";
import {
  DEFILLAMA_ARCHIVE_TIME,
  DEFILLAMA_BASE_URL,
  OPEN_DEFI_STABLECOINS_TIME,
  readDefillamaChainWideCsv,
  readDefillamaChartCsv,
  readDefillamaPricesWideCsv,
  readOpenDefiStablecoinsJson,
  stablecoinChartsEndpoint,
  stablecoinDetailEndpoint,
  stablecoinPricesEndpoint,
  stablecoinsEndpoint,
} from "./defillama.ts";

const NY = DEFILLAMA_ARCHIVE_TIME.zone;

/**
 * open-defi-data's normalised DefiLlama list of 2026-09-02 (MANIFEST §13): its newest `scrapedAt` is
 * 2026-09-02T11:57:40.725Z, rounded UP to the second so a build as of 11:57:40Z does not see it.
 */
const OPEN_DEFI_STABLECOINS_OBSERVED_AT = Math.ceil(Date.parse("2026-09-02T11:57:40.725Z") / 1000);

/** Unix seconds of 2023-03-11 00:00 UTC (the bad-row fixtures' day). */
const SVB_DAY = utcDayStart("2023-03-11");

/**
 * A well-formed `/stablecoins` list entry (USDT: USD peg, price 1, supply 100 now and 90 a day before,
 * 60 of it on Tron): the good element of the list's bad-row fixture, and the base the list parser's
 * unit tests vary (test/unit/sources.test.ts).
 */
export const DEFILLAMA_LIST_ASSET_SAMPLE = {
  id: "1",
  name: "Tether",
  symbol: "USDT",
  gecko_id: "tether",
  pegType: "peggedUSD",
  pegMechanism: "fiat-backed",
  priceSource: "defillama",
  price: 1,
  circulating: { peggedUSD: 100 },
  circulatingPrevDay: { peggedUSD: 90 },
  chainCirculating: { Tron: { current: { peggedUSD: 60 } } },
  chains: ["Tron"],
} as const;

/**
 * DefiLlama's stablecoins API: the list, per-coin detail, supply charts and daily prices. Live: the
 * list, the all-chain chart, the prices and the detail of each registry coin of `detailLlamaIds`;
 * recorded: two lists a year apart and the check-sked archives (US Eastern labels, MANIFEST).
 */
export const defillamaSource: SourceDeclaration = {
  kind: "source",
  name: "defillama",
  endpoints: [stablecoinsEndpoint, stablecoinDetailEndpoint, stablecoinChartsEndpoint, stablecoinPricesEndpoint],
  baseUrl: DEFILLAMA_BASE_URL,
  livePlan: (opts): CaptureStep[] => [
    { endpoint: "defillama.stablecoins", params: {} },
    { endpoint: "defillama.stablecoincharts", params: { chain: "all" } },
    { endpoint: "defillama.stablecoinprices", params: {} },
    ...opts.detailLlamaIds.map((id) => ({ endpoint: "defillama.stablecoin", params: { id } })),
  ],
  recorded: [
    {
      endpoint: "defillama.stablecoins",
      file: "zacheryglass-stablecoinwatch/defillama_raw_output.json",
      observedAt: utcDayStart("2025-09-07"),
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
      endpoint: "defillama.stablecoincharts",
      file: "check-sked-crypto-data-resources/total_stablecoins_all_chains.csv",
      observedAt: utcDayStart("2023-07-31"),
      time: DEFILLAMA_ARCHIVE_TIME,
      required: true,
      read: readDefillamaChartCsv("all", NY, "Total Circulating ($)", "Total Circulating (Stablecoin Units)"),
    },
    {
      endpoint: "defillama.stablecoincharts",
      file: "check-sked-crypto-data-resources/Ethereum_USD_stablecoin_supply.csv",
      observedAt: utcDayStart("2023-07-31"),
      time: DEFILLAMA_ARCHIVE_TIME,
      read: readDefillamaChartCsv("Ethereum", NY, "total_circulating_usd"),
    },
    {
      endpoint: "defillama.stablecoinprices",
      file: "check-sked-crypto-data-resources/stablecoin_prices.csv",
      observedAt: utcDayStart("2023-07-31"),
      time: DEFILLAMA_ARCHIVE_TIME,
      read: readDefillamaPricesWideCsv(NY),
    },
    {
      endpoint: "defillama.stablecoin",
      file: "check-sked-crypto-data-resources/stablecoin_USDC_circulating_by_chain.csv",
      observedAt: utcDayStart("2023-08-01"),
      time: DEFILLAMA_ARCHIVE_TIME,
      read: readDefillamaChainWideCsv("2", "peggedUSD", NY),
    },
  ],
  badRows: {
    "defillama.stablecoins": {
      payload: {
        peggedAssets: [DEFILLAMA_LIST_ASSET_SAMPLE, 42],
      },
    },
    "defillama.stablecoin": {
      payload: {
        id: "2",
        tokens: [{ date: SVB_DAY, circulating: { peggedUSD: 5 } }, "junk"],
        chainBalances: { Tron: { tokens: [{ date: SVB_DAY, circulating: { peggedUSD: 5 } }] }, Bad: 7 },
      },
    },
    "defillama.stablecoincharts": {
      payload: [{ date: String(SVB_DAY), totalCirculatingUSD: { peggedUSD: 5 } }, null],
      params: { chain: "all" },
    },
    "defillama.stablecoinprices": {
      payload: [
        { date: SVB_DAY, prices: { "usd-coin": 0.97 } },
        { date: 1, prices: "nope" },
      ],
    },
  },
};
