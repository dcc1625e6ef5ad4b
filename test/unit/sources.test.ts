import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Papa from "papaparse";
import { describe, expect, it } from "vitest";
import { collectCaptures } from "../../build/captures.ts";
import { REPO_ROOT } from "../../build/config.ts";
import { circuitGroup } from "../../api/health.ts";
import type { Sink } from "../../build/sinks/sink.ts";
import { alchemyDailyPricesArchive } from "../../pipelines/sources/alchemy/alchemy.ts";
import {
  coinsMarketsEndpoint,
  marketChartEndpoint,
  readCoingeckoChartExportCsv,
  readCoingeckoMarketCapScrapeCsv,
} from "../../pipelines/sources/coingecko/coingecko.ts";
import {
  DEFILLAMA_USD_SWITCH_AT,
  readDefillamaPricesWideCsv,
  stablecoinChartsEndpoint,
  stablecoinDetailEndpoint,
  stablecoinPricesEndpoint,
  stablecoinsEndpoint,
} from "../../pipelines/sources/defillama/defillama.ts";
import { ENDPOINTS, SOURCE_BASE_URLS } from "../../pipelines/sources/endpoints.ts";
import { parseJsonText } from "../../pipelines/sources/file-formats.ts";
import { DEFILLAMA_LIST_ASSET_SAMPLE } from "../../pipelines/sources/defillama/source.ts";
import { fxRatesEndpoint } from "../../pipelines/sources/frankfurter/frankfurter.ts";
import { binanceKlinesEndpoint } from "../../pipelines/sources/binance/binance.ts";
import { coingeckoPriceBarsArchive } from "../../pipelines/sources/coingecko/price-bars.ts";
import { onchainSupplySamplesArchive } from "../../pipelines/sources/onchain/supply-samples.ts";
import { SOURCE_LINEAGE, sourceFamily } from "../../pipelines/sources/lineage.ts";
import {
  RECORDED_CAPTURES,
  readAlchemyPriceCsv,
  readBinanceKlinesCsv,
  readCoingeckoRangeBarsJson,
  readDefillamaChainWideCsv,
  readDefillamaChartCsv,
  readEcbHistCsv,
} from "../../pipelines/sources/recorded-captures.ts";
import { alignDailyInstant, alignDailyLabel, wallTimeToUnix } from "../../pipelines/sources/time.ts";
import { discoverSources, SOURCE_CIRCUIT_GROUPS, SOURCES } from "../../pipelines/sources/sources.ts";
import type { BadRowFixture, Capture, Endpoint } from "../../pipelines/sources/types.ts";
import { must } from "../helpers/must.ts";
import { DEMO_SOURCE, DEMO_STAGING } from "../helpers/demo-source.ts";

/** Recorded real inputs (../shared/data beside the checkout). */
const DATA = process.env.BALLAST_CAPTURE_DIR ?? resolve(import.meta.dirname, "../../../shared/data");
const NY = "America/New_York";
const utc = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d) / 1000;

const cap = (observedAt: number, params: Record<string, string> = {}): Capture => ({
  endpoint: "x",
  params,
  observedAt,
  origin: "live",
  path: "p",
  sha256: "s",
  payload: null,
});
/** The declared good list entry (DEFILLAMA_LIST_ASSET_SAMPLE) with fields replaced. */
const asset = (over: Record<string, unknown>) => ({ ...DEFILLAMA_LIST_ASSET_SAMPLE, ...over });

describe("defillama /stablecoins parser", () => {
  it("marks captures before 2025-12-01 as native units and after as USD", () => {
    const before = stablecoinsEndpoint.toRows({ peggedAssets: [asset({})] }, cap(DEFILLAMA_USD_SWITCH_AT - 1));
    const after = stablecoinsEndpoint.toRows({ peggedAssets: [asset({})] }, cap(DEFILLAMA_USD_SWITCH_AT));
    expect(before.rows[0].circulating_unit).toBe("native");
    expect(after.rows[0].circulating_unit).toBe("usd");
  });

  it("accepts numeric strings, counts malformed values and keeps the asset", () => {
    const r = stablecoinsEndpoint.toRows(
      {
        peggedAssets: [
          asset({ price: "0.98", circulating: { peggedUSD: "NaN-ish" }, circulatingPrevMonth: 0 }),
          { id: 5 },
        ],
      },
      cap(0),
    );
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
    const r = stablecoinChartsEndpoint.toRows(
      [
        {
          date: "1609459200",
          totalCirculatingUSD: { peggedUSD: 5, peggedEUR: 2 },
          totalCirculating: { peggedUSD: 5, peggedEUR: 1.5 },
        },
      ],
      cap(0, { chain: "all" }),
    );
    expect(r.rows.map((x) => [x.date, x.peg_type, x.circulating_usd])).toEqual([
      ["2021-01-01", "peggedEUR", 2],
      ["2021-01-01", "peggedUSD", 5],
    ]);
  });

  it("drops zero and NaN prices with a count", () => {
    const r = stablecoinPricesEndpoint.toRows(
      [{ date: 1609459200, prices: { a: 1.001, b: 0, c: "x", d: null } }],
      cap(0),
    );
    expect(r.rows.map((x) => x.gecko_id)).toEqual(["a"]);
    expect(r.dropped["price-non-positive-or-nan"]).toBe(2);
  });
});

describe("coingecko parsers", () => {
  it("keys market_chart points by UTC day and treats a 0 market cap as unknown", () => {
    const r = marketChartEndpoint.toRows(
      { prices: [[1609459200000, 1.01]], market_caps: [[1609459200000, 0]], total_volumes: [[1609459200000, 7]] },
      cap(0, { id: "tether" }),
    );
    expect(r.rows).toEqual([
      { gecko_id: "tether", date: "2021-01-01", price_usd: 1.01, market_cap_usd: null, volume_usd: 7 },
    ]);
  });

  it("parses /coins/markets items", () => {
    const r = coinsMarketsEndpoint.toRows(
      [
        {
          id: "tether",
          symbol: "usdt",
          current_price: 1,
          market_cap: 10,
          total_volume: 2,
          circulating_supply: 10,
          last_updated: "2025-09-11T18:10:16.361Z",
        },
      ],
      cap(5),
    );
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

  it("turns a wide chain CSV into a /stablecoin/{id} payload (US Eastern labels → UTC instants)", () => {
    const out = readDefillamaChainWideCsv(
      "2",
      "peggedUSD",
      "America/New_York",
    )("Date,Tron_Circulating,BSC_Circulating\n2022-05-11 20:00:00,5,\n");
    // 2022-05-11 20:00 EDT = 2022-05-12 00:00 UTC
    expect(out.captures[0].payload).toEqual({
      id: "2",
      chainBalances: { Tron: { tokens: [{ date: Date.UTC(2022, 4, 12) / 1000, circulating: { peggedUSD: "5" } }] } },
    });
  });
});

describe("intraday price bars", () => {
  it("binance klines: bar end as time, USDT quote kept for SQL conversion, bad bars counted", () => {
    const csv =
      "1678543200000,1.0,1.0,0.882,0.9121,7424303,1678543259999,6743845,2153,2571107,2343854,0\n1678543260000,0.9123,0.917,0.9098,0,5718317,1678543319999,1,1,1,1,0\n1678543320000,1,0.9,1,1,1,1678543379999,1,1,1,1,0\n";
    const { captures } = readBinanceKlinesCsv("USDCUSDT", "1m")(csv);
    const r = binanceKlinesEndpoint.toRows(captures[0].payload, { ...cap(0, captures[0].params) });
    expect(r.rows).toEqual([
      {
        source: "binance",
        gecko_id: "usd-coin",
        quote: "USDT",
        date: "2023-03-11",
        ts: 1678543260,
        interval_sec: 60,
        open: 1,
        high: 1,
        low: 0.882,
        close: 0.9121,
      },
    ]);
    expect(r.dropped).toEqual({ "price-non-positive-or-nan": 1, "high-below-low": 1 });
    expect(
      binanceKlinesEndpoint.toRows([[1, 1, 1, 1, 1, 1, 1]], cap(0, { symbol: "NOPE", interval: "1m" })).dropped,
    ).toEqual({ "unknown-pair-or-interval": 1 });
  });

  it("range bars: bar open + interval as time, USD quote", () => {
    const { captures } = readCoingeckoRangeBarsJson(
      "usd-coin",
      900,
    )(
      JSON.stringify({
        meta: {},
        data: [
          { dt: "2023-03-11T09:45:00.000Z", o: 0.9, h: 0.91, l: 0.8994, c: 0.905, v: 1 },
          { dt: "bad", o: 1, h: 1, l: 1, c: 1 },
        ],
      }),
    );
    const r = coingeckoPriceBarsArchive.toRows(captures[0].payload, cap(0));
    expect(r.rows).toHaveLength(1);
    expect(r.rows[0]).toMatchObject({
      ts: Date.parse("2023-03-11T10:00:00Z") / 1000,
      quote: "USD",
      low: 0.8994,
      close: 0.905,
    });
    expect(r.dropped).toEqual({ "bar-time-invalid": 1 });
  });
});

describe("daily alignment rule (time zones)", () => {
  it("a US Eastern day label D is 00:00 UTC of D+1, on both sides of the DST switches", () => {
    expect(alignDailyLabel("2023-03-10", NY)).toEqual({ ok: true, date: "2023-03-11", unixSec: utc(2023, 3, 11) }); // EST
    expect(alignDailyLabel("2023-03-12", NY)).toMatchObject({ ok: true, date: "2023-03-13" }); // first EDT day
    expect(alignDailyLabel("2022-11-06", NY)).toMatchObject({ ok: true, date: "2022-11-07" }); // first EST day
    expect(alignDailyLabel("2021-07-01", NY)).toMatchObject({ ok: true, date: "2021-07-02" });
  });

  it("a US Eastern instant label converts with its zone's offset (19:00 EST / 20:00 EDT = 00:00 UTC)", () => {
    expect(alignDailyLabel("2023-03-10 19:00:00", NY)).toMatchObject({ ok: true, date: "2023-03-11" });
    expect(alignDailyLabel("2023-03-12 20:00:00", NY)).toMatchObject({ ok: true, date: "2023-03-13" });
    expect(alignDailyLabel("2022-11-05 20:00:00", NY)).toMatchObject({ ok: true, date: "2022-11-06" });
    expect(alignDailyLabel("2022-11-06 19:00:00", NY)).toMatchObject({ ok: true, date: "2022-11-07" });
    // 20:00 EST is 01:00 UTC: still within the ±1 h tolerance; 21:30 EST (02:30 UTC) is not.
    expect(alignDailyLabel("2023-01-10 20:00:00", NY)).toMatchObject({ ok: true, date: "2023-01-11" });
    expect(alignDailyLabel("2023-01-10 21:30:00", NY)).toEqual({ ok: false, reason: "off-day-boundary" });
    // a wall time of the repeated fall-back hour is its earlier instant (EDT, 05:30Z)
    expect(wallTimeToUnix({ year: 2022, month: 11, day: 6, hour: 1, minute: 30, second: 0 }, NY)).toBe(
      Date.UTC(2022, 10, 6, 5, 30) / 1000,
    );
    // the trailing "now" row of a DefiLlama detail archive
    expect(alignDailyLabel("2023-07-31 10:39:59", NY)).toEqual({ ok: false, reason: "off-day-boundary" });
  });

  it("UTC labels and instants: a day is itself, an instant within ±1 h of 00:00 UTC belongs to that boundary", () => {
    expect(alignDailyLabel("2021-01-01", "UTC")).toMatchObject({ ok: true, date: "2021-01-01" });
    expect(alignDailyLabel("2018-10-05 00:00:00 UTC", "UTC")).toMatchObject({ ok: true, date: "2018-10-05" });
    expect(alignDailyInstant(utc(2021, 1, 2) - 1800)).toMatchObject({ ok: true, date: "2021-01-02" });
    expect(alignDailyInstant(utc(2021, 1, 2) + 3600)).toMatchObject({ ok: true, date: "2021-01-02" });
    expect(alignDailyInstant(utc(2021, 1, 2) + 3601)).toEqual({ ok: false, reason: "off-day-boundary" });
    expect(alignDailyLabel("2025-05-09", "Europe/Berlin")).toMatchObject({ ok: true, date: "2025-05-09" });
  });

  it("rejects unparseable labels, impossible dates, non-existent local times and zone-less labels marked UTC elsewhere", () => {
    for (const [label, zone] of [
      ["2023-02-30", "UTC"],
      ["yesterday", NY],
      ["2023-03-12 02:30:00", NY],
      ["2023-03-10 19:00:00 UTC", NY],
    ]) {
      expect(alignDailyLabel(label, zone)).toEqual({ ok: false, reason: "time-label-invalid" });
    }
  });
});

describe("recorded DefiLlama archives are aligned to UTC days (real files)", () => {
  it("(a) USDC circulating summed over chains at 2023-03-11 00:00Z is 42.20 B — the row labelled 2023-03-10 19:00:00", () => {
    const file = join(DATA, "check-sked-crypto-data-resources/stablecoin_USDC_circulating_by_chain.csv");
    const text = readFileSync(file, "utf8");
    const rc = must(
      RECORDED_CAPTURES.find((r) => r.file.endsWith("stablecoin_USDC_circulating_by_chain.csv")),
      "the recorded USDC circulating-by-chain capture",
    );
    expect(rc.time.zone).toBe(NY);
    const out = rc.read(text);
    const { rows, dropped } = stablecoinDetailEndpoint.toRows(out.captures[0].payload, cap(0, out.captures[0].params));
    const total = rows.filter((r) => r.date === "2023-03-11").reduce((s, r) => s + Number(r.circulating_native), 0);
    expect(Math.abs(total / 42.2e9 - 1)).toBeLessThan(0.005);
    // independent of the code under test: the file's own row with that label
    const raw = must(
      Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true }).data.find(
        (r) => r.Date === "2023-03-10 19:00:00",
      ),
      "the row labelled 2023-03-10 19:00:00",
    );
    const rawSum = Object.entries(raw)
      .filter(([k]) => k.endsWith("_Circulating"))
      .reduce((s, [, v]) => s + (v === "" ? 0 : Number(v)), 0);
    expect(total).toBeCloseTo(rawSum, 0);
    // the "2023-07-31 10:39:59" now-row is not a daily point: dropped and counted, once per chain
    expect(dropped["off-day-boundary"]).toBeGreaterThan(0);
    expect(rows.some((r) => r.date === "2023-07-31")).toBe(false);
  });

  it("(b) DefiLlama's daily USDC price lines up with CoinGecko's on the same UTC day", () => {
    const ll = readDefillamaPricesWideCsv(NY)(
      readFileSync(join(DATA, "check-sked-crypto-data-resources/stablecoin_prices.csv"), "utf8"),
    );
    const llRows = stablecoinPricesEndpoint
      .toRows(ll.captures[0].payload, cap(0))
      .rows.filter((r) => r.gecko_id === "usd-coin");
    const cg = readCoingeckoChartExportCsv(
      "usd-coin",
      "UTC",
    )(readFileSync(join(DATA, "bhemen-crypto-insights/coingecko-usdc-usdt/usdc_history.csv"), "utf8"));
    const cgBy = new Map(
      marketChartEndpoint
        .toRows(cg.captures[0].payload, cap(0, { id: "usd-coin" }))
        .rows.map((r) => [String(r.date), Number(r.price_usd)]),
    );
    const shift = (d: string, k: number) =>
      new Date(Date.parse(`${d}T00:00:00Z`) + k * 86_400_000).toISOString().slice(0, 10);
    const matches = (k: number, filter: (d: string) => boolean = () => true) => {
      let shared = 0;
      let equal = 0;
      for (const r of llRows) {
        if (!filter(String(r.date))) continue;
        const c = cgBy.get(shift(String(r.date), k));
        if (c === undefined) continue;
        shared++;
        if (Math.abs(c - Number(r.price_usd)) <= 1e-6) equal++;
      }
      return { shared, equal };
    };
    const same = matches(0);
    expect(same.shared).toBeGreaterThan(900);
    expect(same.equal / same.shared).toBeGreaterThan(0.5);
    // while DefiLlama sourced USDC from CoinGecko (2021), the aligned series are identical
    const y2021 = matches(0, (d) => d.startsWith("2021"));
    expect(y2021.shared).toBeGreaterThan(360);
    expect(y2021.equal / y2021.shared).toBeGreaterThan(0.99);
    // the old off-by-one no longer holds in either direction
    expect(matches(-1).equal).toBe(0);
    expect(matches(1).equal / matches(1).shared).toBeLessThan(0.01);
  });

  it("date-only archive charts land on D+1 (total supply file's first row, labelled 2020-12-30)", () => {
    const out = readDefillamaChartCsv(
      "all",
      NY,
      "Total Circulating ($)",
    )("Date,Total Circulating ($)\n2020-12-30,27953631243.81\n");
    const rows = stablecoinChartsEndpoint.toRows(out.captures[0].payload, cap(0, { chain: "all" })).rows;
    expect(rows).toEqual([
      {
        chart: "all",
        date: "2020-12-31",
        peg_type: "total",
        circulating_usd: 27953631243.81,
        circulating_native: null,
      },
    ]);
  });
});

describe("every other reader declares its zone", () => {
  it("CoinGecko export: snapped_at 00:00:00 UTC is that UTC day", () => {
    const out = readCoingeckoChartExportCsv(
      "usd-coin",
      "UTC",
    )("snapped_at,price,market_cap,total_volume\n2018-10-05 00:00:00 UTC,1.006,0.0,31264\nbad,1,1,1\n");
    expect(out.dropped).toEqual({ "time-label-invalid": 1 });
    expect(marketChartEndpoint.toRows(out.captures[0].payload, cap(0, { id: "usd-coin" })).rows[0]).toMatchObject({
      date: "2018-10-05",
      price_usd: 1.006,
    });
  });

  it("market-cap scrape: a scrape counts from its instant (the next 00:00Z point), the newest scrape ≤ a point wins", () => {
    // hand-made: 2025-12-26 has an exact 00:00:00 scrape and two intraday ones (as in the raw file)
    const csv =
      "\uFEFFdate,coin_name,market_cap\n2025-12-26 00:00:00.000,Tether,1\n2025-12-26 10:52:25.000,Tether,3\n" +
      "2025-12-26 01:18:47.000,Tether,2\n2025-12-27 01:07:06.000,Tether,4\n2025-12-28 23:30:00.000,Tether,5\n" +
      "2025-12-29 00:00:00.000,Tether,6\n2025-12-29 00:00:00.000,Nope,7\n";
    const out = readCoingeckoMarketCapScrapeCsv({ Tether: "tether" }, "UTC")(csv);
    // 01:18:47 is replaced by 10:52:25 (both ≤ 12-27 00:00Z); 23:30 on 12-28 by the exact 12-29 00:00 row
    expect(out.dropped).toEqual({ "coin-name-unmapped": 1, "superseded-by-later-scrape": 2 });
    const parsed = marketChartEndpoint.toRows(out.captures[0].payload, cap(0, { id: "tether" }));
    expect(parsed.dropped).toEqual({});
    expect(parsed.rows.map((r) => [r.date, r.market_cap_usd])).toEqual([
      ["2025-12-26", 1], // the 00:00:00 row, never the 10:52:25 one
      ["2025-12-27", 3], // the newest scrape of 12-26 (10:52:25Z) counts from 12-27 00:00Z
      ["2025-12-28", 4],
      ["2025-12-29", 6],
    ]);
  });

  it("Alchemy rows are UTC days; ECB dates are business days kept as dated", () => {
    const a = readAlchemyPriceCsv("usd-coin")("timestamp,price\n2023-03-11,0.9656\n2023-03-11 13:00,1\n");
    const r = alchemyDailyPricesArchive.toRows(a.captures[0].payload, cap(0));
    expect(r.rows).toEqual([{ source: "alchemy", gecko_id: "usd-coin", date: "2023-03-11", price_usd: 0.9656 }]);
    expect(r.dropped).toEqual({ "off-day-boundary": 1 });
    const e = readEcbHistCsv("Date,USD,\n2023-03-10,1.0625,\n");
    expect(fxRatesEndpoint.toRows(e.captures[0].payload, cap(0)).rows[0]).toMatchObject({
      date: "2023-03-10",
      rate: 1.0625,
    });
  });

  it("range bars need an explicit UTC designator; on-chain samples are UTC wall times", () => {
    const r = coingeckoPriceBarsArchive.toRows(
      { geckoId: "usd-coin", intervalSec: 900, bars: [{ dt: "2023-03-11T09:45:00", o: 1, h: 1, l: 1, c: 1 }] },
      cap(0),
    );
    expect(r.dropped).toEqual({ "bar-time-invalid": 1 });
    const s = onchainSupplySamplesArchive.toRows(
      {
        chainId: "bsc",
        decimals: 18,
        rows: [{ address: "0xA", symbol: "USDC", block: "1", supply: "10", ts: "2025-01-04 23:59:59" }],
      },
      cap(0),
    );
    expect(s.rows[0]).toMatchObject({
      date: "2025-01-04",
      observed_at: Date.UTC(2025, 0, 4, 23, 59, 59) / 1000,
      contract_address: "0xa",
    });
  });

  it("every recorded file and endpoint declares an IANA zone the platform knows", () => {
    for (const z of [
      ...RECORDED_CAPTURES.map((r) => r.time.zone),
      ...Object.values(ENDPOINTS).map((e) => e.time.zone),
    ]) {
      expect(() => new Intl.DateTimeFormat("en-US", { timeZone: z })).not.toThrow();
    }
    for (const f of [
      "stablecoin_prices.csv",
      "total_stablecoins_all_chains.csv",
      "Ethereum_USD_stablecoin_supply.csv",
      "stablecoin_USDC_circulating_by_chain.csv",
    ]) {
      expect(
        must(
          RECORDED_CAPTURES.find((r) => r.file.endsWith(f)),
          `the recorded capture ${f}`,
        ).time.zone,
      ).toBe(NY);
    }
  });
});

describe("lineage", () => {
  it("alchemy is CoinGecko's family; DefiLlama and Binance are independent", () => {
    expect(sourceFamily("alchemy")).toBe(sourceFamily("coingecko"));
    expect(sourceFamily("alchemy")).not.toBe(sourceFamily("defillama"));
    expect(sourceFamily("binance")).not.toBe(sourceFamily("coingecko"));
    expect(sourceFamily("binance")).not.toBe(sourceFamily("defillama"));
    expect(sourceFamily("somewhere-new")).toBe("somewhere-new");
  });

  it("SOURCE_LINEAGE covers every endpoint once, from the endpoints' declarations", () => {
    expect(SOURCE_LINEAGE.flatMap((s) => s.endpoints).sort()).toEqual(Object.keys(ENDPOINTS).sort());
    const lineage = (source: string) =>
      must(
        SOURCE_LINEAGE.find((s) => s.source === source),
        `${source} in SOURCE_LINEAGE`,
      );
    expect(lineage("alchemy")).toMatchObject({ family: "coingecko", derivedFrom: "coingecko", zone: "UTC" });
    expect(lineage("defillama").zone).toContain(NY);
    expect(lineage("frankfurter").family).toBe("ecb");
    expect(lineage("onchain").family).toBe("onchain");
  });
});

/** A capture dir mirroring the recorded data, with `file` replaced by `content`. */
function captureDirWith(file: string, content: string): string {
  const dir = mkdtempSync(join(tmpdir(), "ballast-captures-"));
  const [top, ...rest] = file.split("/");
  for (const entry of readdirSync(DATA)) if (entry !== top) symlinkSync(join(DATA, entry), join(dir, entry));
  mkdirSync(join(dir, top));
  for (const entry of readdirSync(join(DATA, top)))
    if (entry !== rest.join("/")) symlinkSync(join(DATA, top, entry), join(dir, top, entry));
  mkdirSync(join(dir, file, ".."), { recursive: true });
  writeFileSync(join(dir, file), content);
  return dir;
}
const emptySink: Sink = { put: async () => {}, get: async () => null, list: async () => [], delete: async () => {} };

/** The envelope of `f` passes the endpoint's schema, its good row survives and its bad one is dropped and counted. */
function expectBadRowDropsOnlyItself(ep: Endpoint, f: BadRowFixture): void {
  const parsed = ep.payloadSchema.safeParse(f.payload);
  expect(parsed.success).toBe(true);
  const r = ep.toRows(parsed.data, cap(0, f.params ?? {}));
  expect(r.rows.length).toBeGreaterThan(0);
  expect(Object.values(r.dropped).reduce((s, n) => s + n, 0)).toBeGreaterThan(0);
}

describe("bad input: files that cannot be read fail the build, naming file and position", () => {
  it("collectCaptures throws on a truncated JSON capture with the file path and line/column", async () => {
    const file = "zacheryglass-stablecoinwatch/defillama_raw_output.json";
    const full = readFileSync(join(DATA, file), "utf8");
    const truncated = full.slice(0, 5000);
    const dir = captureDirWith(file, truncated);
    const lines = truncated.split("\n");
    const err = await collectCaptures(dir, emptySink, utc(2026, 1, 1), async () => {}).then(
      () => null,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    const { message } = must(err, "the collectCaptures error");
    expect(message).toContain(join(dir, file));
    expect(message).toContain(`line ${lines.length}, column ${lines[lines.length - 1].length + 1}`);
    expect(message).toContain(`char offset ${truncated.length}`);
  });

  it("names the position of a syntax error inside the text", () => {
    expect(() => parseJsonText('{\n  "a": 1,\n  "b": x\n}')).toThrow(/line 3, column 8 \(char offset 19\)/);
    expect(() => parseJsonText("[1, 2,]")).toThrow(/line 1, column 7/);
  });

  it("a truncated CSV drops only its broken row, counted in readerDropped with its line", async () => {
    const file = "check-sked-crypto-data-resources/stablecoin_prices.csv";
    const full = readFileSync(join(DATA, file), "utf8");
    const cut = full.lastIndexOf("\n", full.length - 2) + 40; // mid-way through the last row
    const dir = captureDirWith(file, full.slice(0, cut));
    const payloads = new Map<string, unknown>();
    const set = await collectCaptures(dir, emptySink, utc(2026, 1, 1), async (info, payload) => {
      payloads.set(info.path, payload);
    });
    expect(set.readerDropped[file]).toEqual({ "csv-parse-error": 1 });
    const lineCount = full.trimEnd().split("\n").length;
    expect(set.readerProblems[file]).toEqual([expect.objectContaining({ line: lineCount, code: "TooFewFields" })]);
    expect(set.captures.some((c) => c.path === file)).toBe(true);
    expect((payloads.get(file) as unknown[]).length).toBe(lineCount - 2); // header and the broken row
  });
});

describe("bad input: reject rows, not files", () => {
  it("binance: one short row among good ones is dropped and counted; the file loads", () => {
    const payload = [
      [1678543200000, "1.0", "1.0", "0.882", "0.9121", "7424303", 1678543259999],
      [1678543260000, "0.91"],
      "not-a-row",
      [1678543320000, "0.9135", "0.914", "0.901", "0.905", "7950113", 1678543379999],
    ];
    expect(binanceKlinesEndpoint.payloadSchema.safeParse(payload).success).toBe(true);
    const r = binanceKlinesEndpoint.toRows(payload, cap(0, { symbol: "USDCUSDT", interval: "1m" }));
    expect(r.rows).toHaveLength(2);
    expect(r.dropped).toEqual({ "kline-row-invalid": 2 });
  });

  it("binance CSV reader: a row of a different width is a counted csv-parse-error with its line", () => {
    const out = readBinanceKlinesCsv(
      "USDCUSDT",
      "1m",
    )("1678543200000,1,1,0.9,0.95,1,1678543259999,1,1,1,1,0\n1678543260000,0.95,0.96\n");
    expect(out.dropped).toEqual({ "csv-parse-error": 1 });
    expect(out.problems).toEqual([expect.objectContaining({ line: 2, code: "TooFewFields" })]);
    expect(out.captures[0].payload).toHaveLength(1);
  });

  it("CSV rows papaparse flags (too few/many fields, broken quotes) are dropped, counted and located", () => {
    const out = readEcbHistCsv(
      'Date,USD,CHF,\n2025-05-09,1.1,0.9,\n2025-05-08,1.2\n2025-05-07,1.3,0.8,,extra\n2025-05-06,"1.4,0.7,\n',
    );
    expect(out.dropped).toEqual({ "csv-parse-error": 3 });
    expect(must(out.problems, "the reader's problems").map((p) => p.line)).toEqual([3, 4, 5]);
    expect(Object.keys((out.captures[0].payload as { rates: object }).rates)).toEqual(["2025-05-09"]);
  });

  // One good element and one malformed element per endpoint, declared by its source (`badRows` in
  // pipelines/sources/<source>/source.ts): the envelope must pass and the good row survive.
  const mixed: Record<string, BadRowFixture> = Object.assign({}, ...SOURCES.map((s) => s.badRows));
  it.each(Object.keys(ENDPOINTS))("%s: a malformed element drops only itself", (key) => {
    expect(mixed[key], `fixture for ${key}`).toBeDefined();
    expectBadRowDropsOnlyItself(ENDPOINTS[key], mixed[key]);
  });
});

describe("bad input: implausible upstream numbers in the DefiLlama parsers", () => {
  it("list: a 1e308 supply bucket and a $1e14 price are dropped as implausible-value", () => {
    const r = stablecoinsEndpoint.toRows(
      {
        peggedAssets: [
          asset({
            price: 1e14,
            circulating: { peggedUSD: 1e308, peggedEUR: 5 },
            chainCirculating: { Tron: { current: { peggedUSD: "Infinity" } } },
          }),
        ],
      },
      cap(0),
    );
    expect(r.rows).toHaveLength(1);
    expect(JSON.parse(String(r.rows[0].buckets_json)).current).toEqual({ peggedEUR: 5 });
    expect(JSON.parse(String(r.rows[0].chain_buckets_json)).Tron.current).toEqual({});
    expect(r.rows[0].price).toBeNull();
    expect(r.dropped["implausible-value"]).toBe(3);
  });

  it("detail, charts and prices: values above 1e13 or non-finite are dropped; 1e13 itself is kept", () => {
    const d = stablecoinDetailEndpoint.toRows(
      { id: "2", tokens: [{ date: utc(2023, 3, 11), circulating: { peggedUSD: 1e308, peggedEUR: 1e13 } }] },
      cap(0),
    );
    expect(d.rows.map((r) => r.peg_type)).toEqual(["peggedEUR"]);
    expect(d.dropped).toEqual({ "implausible-value": 1 });
    const c = stablecoinChartsEndpoint.toRows(
      [
        {
          date: String(utc(2023, 3, 11)),
          totalCirculatingUSD: { peggedUSD: 2e13, peggedEUR: 1 },
          totalCirculating: { peggedUSD: 1, peggedEUR: "1e400" },
        },
      ],
      cap(0, { chain: "all" }),
    );
    expect(c.rows).toEqual([]);
    expect(c.dropped).toEqual({ "implausible-value": 2 });
    const p = stablecoinPricesEndpoint.toRows(
      [{ date: utc(2023, 3, 11), prices: { a: 1e13 + 1, b: "NaN", c: 0.99 } }],
      cap(0),
    );
    expect(p.rows.map((r) => r.gecko_id)).toEqual(["c"]);
    expect(p.dropped).toEqual({ "implausible-value": 2 });
  });
});

/**
 * The README recipe "Add a source", followed in a scratch folder: a source is its folder with two
 * files, its declaration module and its staging SQL. The shared modules of pipelines/sources/ and
 * node_modules are linked in, as they sit beside a real source folder.
 */
function scratchSourcesWith(name: string, files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "ballast-new-source-"));
  const dir = join(root, "pipelines", "sources");
  mkdirSync(join(dir, name), { recursive: true });
  symlinkSync(join(REPO_ROOT, "node_modules"), join(root, "node_modules"));
  for (const f of readdirSync(join(REPO_ROOT, "pipelines/sources")))
    if (f.endsWith(".ts")) symlinkSync(join(REPO_ROOT, "pipelines/sources", f), join(dir, f));
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, name, file), text);
  return dir;
}

describe("a source is one folder found by file", () => {
  it("every source folder's declaration is discovered, and every endpoint of the build belongs to one", () => {
    expect(SOURCES.map((s) => s.name)).toEqual(
      readdirSync(join(REPO_ROOT, "pipelines/sources"), { withFileTypes: true })
        .filter((e) => e.isDirectory() && !e.name.startsWith("_"))
        .map((e) => e.name)
        .sort(),
    );
    expect(Object.keys(ENDPOINTS).sort()).toEqual(SOURCES.flatMap((s) => s.endpoints.map((e) => e.key)).sort());
    // the base URLs the live clients default to
    expect(SOURCE_BASE_URLS).toMatchObject({
      defillama: "https://stablecoins.llama.fi",
      coingecko: "https://api.coingecko.com/api/v3/",
      binance: "https://api.binance.com/",
    });
    expect(SOURCE_BASE_URLS).not.toHaveProperty("alchemy");
  });

  it("circuit groups are the sources' lineage families, and health groups every circuit that way", () => {
    expect(SOURCE_CIRCUIT_GROUPS).toMatchObject({
      alchemy: "coingecko",
      frankfurter: "ecb",
      usds: "onchain",
      "defillama-yields": "defillama",
      defillama: "defillama",
      binance: "binance",
    });
    for (const [name, group] of Object.entries(SOURCE_CIRCUIT_GROUPS)) expect(circuitGroup(name), name).toBe(group);
  });

  it("a folder without a declaration, or declaring another name, or an endpoint without its bad-row fixture, is refused", async () => {
    await expect(discoverSources(scratchSourcesWith("demo", { "stg_demo__prices.sql": DEMO_STAGING }))).rejects.toThrow(
      /pipelines\/sources\/demo has no source.ts/,
    );
    await expect(discoverSources(scratchSourcesWith("other", { "source.ts": DEMO_SOURCE }))).rejects.toThrow(
      /declares source demo/,
    );
    await expect(
      discoverSources(
        scratchSourcesWith("demo", {
          "source.ts": DEMO_SOURCE.replace('badRows: { "demo.prices"', 'badRows: { "demo.other"'),
        }),
      ),
    ).rejects.toThrow(/demo.prices has no bad-row fixture/);
  });
});
