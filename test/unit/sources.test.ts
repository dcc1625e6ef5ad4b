import { describe, expect, it } from "vitest";
import { coinsMarketsEndpoint, marketChartEndpoint } from "../../pipelines/sources/coingecko.ts";
import { DEFILLAMA_USD_SWITCH_AT, stablecoinChartsEndpoint, stablecoinPricesEndpoint, stablecoinsEndpoint } from "../../pipelines/sources/defillama.ts";
import { fxRatesEndpoint } from "../../pipelines/sources/frankfurter.ts";
import { binanceKlinesEndpoint, coingeckoPriceBarsArchive } from "../../pipelines/sources/binance.ts";
import { readBinanceKlinesCsv, readCoingeckoRangeBarsJson, readDefillamaChainWideCsv, readEcbHistCsv } from "../../pipelines/sources/recorded-captures.ts";
import type { Capture } from "../../pipelines/sources/types.ts";

const cap = (observedAt: number, params: Record<string, string> = {}): Capture => ({ endpoint: "x", params, observedAt, origin: "live", path: "p", sha256: "s", payload: null });
const asset = (over: Record<string, unknown>) => ({
  id: "1", name: "Tether", symbol: "USDT", gecko_id: "tether", pegType: "peggedUSD", pegMechanism: "fiat-backed", priceSource: "defillama",
  price: 1, circulating: { peggedUSD: 100 }, circulatingPrevDay: { peggedUSD: 90 }, chainCirculating: { Tron: { current: { peggedUSD: 60 } } }, chains: ["Tron"], ...over,
});

describe("defillama /stablecoins parser", () => {
  it("marks captures before 2025-12-01 as native units and after as USD", () => {
    const before = stablecoinsEndpoint.toRows({ peggedAssets: [asset({})] }, cap(DEFILLAMA_USD_SWITCH_AT - 1));
    const after = stablecoinsEndpoint.toRows({ peggedAssets: [asset({})] }, cap(DEFILLAMA_USD_SWITCH_AT));
    expect(before.rows[0].circulating_unit).toBe("native");
    expect(after.rows[0].circulating_unit).toBe("usd");
  });

  it("accepts numeric strings, counts malformed values and keeps the asset", () => {
    const r = stablecoinsEndpoint.toRows({ peggedAssets: [asset({ price: "0.98", circulating: { peggedUSD: "NaN-ish" }, circulatingPrevMonth: 0 }), { id: 5 }] }, cap(0));
    expect(r.rows).toHaveLength(1);
    expect(r.rows[0].price).toBe(0.98);
    expect(JSON.parse(String(r.rows[0].buckets_json)).current).toEqual({});
    expect(r.dropped["bucket-invalid-value"]).toBe(1);
    expect(r.dropped["bucket-legacy-zero-absent"]).toBe(1);
    expect(Object.keys(r.dropped).some((k) => k.startsWith("asset-invalid"))).toBe(true);
  });

  it("rejects non-positive prices into null with a counted reason", () => {
    const r = stablecoinsEndpoint.toRows({ peggedAssets: [asset({ price: -1 })] }, cap(0));
    expect(r.rows[0].price).toBeNull();
    expect(r.dropped["price-invalid"]).toBe(1);
  });
});

describe("defillama charts and prices", () => {
  it("reads string epoch dates and keys rows by peg", () => {
    const r = stablecoinChartsEndpoint.toRows([{ date: "1609459200", totalCirculatingUSD: { peggedUSD: 5, peggedEUR: 2 }, totalCirculating: { peggedUSD: 5, peggedEUR: 1.5 } }], cap(0, { chain: "all" }));
    expect(r.rows.map((x) => [x.date, x.peg_type, x.circulating_usd])).toEqual([["2021-01-01", "peggedEUR", 2], ["2021-01-01", "peggedUSD", 5]]);
  });

  it("drops zero and NaN prices with a count", () => {
    const r = stablecoinPricesEndpoint.toRows([{ date: 1609459200, prices: { a: 1.001, b: 0, c: "x", d: null } }], cap(0));
    expect(r.rows.map((x) => x.gecko_id)).toEqual(["a"]);
    expect(r.dropped["price-non-positive-or-nan"]).toBe(2);
  });
});

describe("coingecko parsers", () => {
  it("keys market_chart points by UTC day and treats a 0 market cap as unknown", () => {
    const r = marketChartEndpoint.toRows({ prices: [[1609459200000, 1.01]], market_caps: [[1609459200000, 0]], total_volumes: [[1609459200000, 7]] }, cap(0, { id: "tether" }));
    expect(r.rows).toEqual([{ gecko_id: "tether", date: "2021-01-01", price_usd: 1.01, market_cap_usd: null, volume_usd: 7 }]);
  });

  it("parses /coins/markets items", () => {
    const r = coinsMarketsEndpoint.toRows([{ id: "tether", symbol: "usdt", current_price: 1, market_cap: 10, total_volume: 2, circulating_supply: 10, last_updated: "2025-09-11T18:10:16.361Z" }], cap(5));
    expect(r.rows[0]).toMatchObject({ gecko_id: "tether", price_usd: 1, last_updated_at: 1757614216, observed_at: 5 });
  });
});

describe("recorded capture readers", () => {
  it("turns the ECB CSV into a Frankfurter payload the FX parser accepts", () => {
    const out = readEcbHistCsv("Date,USD,CYP,CHF,\n2025-05-09,1.1252,N/A,0.9353,\n");
    const rows = fxRatesEndpoint.toRows(out.captures[0].payload, cap(0)).rows;
    expect(rows).toEqual([
      { date: "2025-05-09", base: "EUR", quote: "CHF", rate: 0.9353 },
      { date: "2025-05-09", base: "EUR", quote: "USD", rate: 1.1252 },
    ]);
  });

  it("turns a wide chain CSV into a /stablecoin/{id} payload", () => {
    const out = readDefillamaChainWideCsv("2", "peggedUSD")("Date,Tron_Circulating,BSC_Circulating\n2022-05-11 20:00:00,5,\n");
    expect(out.captures[0].payload).toEqual({ id: "2", chainBalances: { Tron: { tokens: [{ date: 1652227200, circulating: { peggedUSD: "5" } }] } } });
  });
});

describe("intraday price bars", () => {
  it("binance klines: bar end as time, USDT quote kept for SQL conversion, bad bars counted", () => {
    const csv = "1678543200000,1.0,1.0,0.882,0.9121,7424303,1678543259999,6743845,2153,2571107,2343854,0\n1678543260000,0.9123,0.917,0.9098,0,5718317,1678543319999,1,1,1,1,0\n1678543320000,1,0.9,1,1,1,1678543379999,1,1,1,1,0\n";
    const { captures } = readBinanceKlinesCsv("USDCUSDT", "1m")(csv);
    const r = binanceKlinesEndpoint.toRows(captures[0].payload, { ...cap(0, captures[0].params) });
    expect(r.rows).toEqual([{ source: "binance", gecko_id: "usd-coin", quote: "USDT", date: "2023-03-11", ts: 1678543260, interval_sec: 60, open: 1, high: 1, low: 0.882, close: 0.9121 }]);
    expect(r.dropped).toEqual({ "price-non-positive-or-nan": 1, "high-below-low": 1 });
    expect(binanceKlinesEndpoint.toRows([[1, 1, 1, 1, 1, 1, 1]], cap(0, { symbol: "NOPE", interval: "1m" })).dropped).toEqual({ "unknown-pair-or-interval": 1 });
  });

  it("range bars: bar open + interval as time, USD quote", () => {
    const { captures } = readCoingeckoRangeBarsJson("usd-coin", 900)(JSON.stringify({ meta: {}, data: [{ dt: "2023-03-11T09:45:00.000Z", o: 0.9, h: 0.91, l: 0.8994, c: 0.905, v: 1 }, { dt: "bad", o: 1, h: 1, l: 1, c: 1 }] }));
    const r = coingeckoPriceBarsArchive.toRows(captures[0].payload, cap(0));
    expect(r.rows).toHaveLength(1);
    expect(r.rows[0]).toMatchObject({ ts: Date.parse("2023-03-11T10:00:00Z") / 1000, quote: "USD", low: 0.8994, close: 0.905 });
    expect(r.dropped).toEqual({ "bar-time-invalid": 1 });
  });
});
