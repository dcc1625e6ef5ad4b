import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../build/duckdb.ts";
import { loadAndModel } from "../../build/stages/model.ts";
import type { Registry } from "../../pipelines/registry/schema.ts";
import type { Capture } from "../../pipelines/sources/types.ts";
import { registryCoin } from "../helpers/registry-coin.ts";

/**
 * Freshness windows of current figures (Endpoint.currentWindowSec: DefiLlama list 2 days, daily supply
 * points 3 days, ECB rates 4 days) and two valuation rules: a market cap without its own price is
 * divided by CoinGecko's daily price of its day (else the consensus), and a non-USD peg whose ECB rate is
 * beyond its window is valued at the same-peg consensus of >= 3 coins before the stale rate.
 */
const DAY = 86400;
const LIST_AT = Date.parse("2025-09-07T00:00:00Z") / 1000;
const MC_DAY = Date.parse("2023-03-12T00:00:00Z") / 1000;

const registry: Registry = {
  eventFamilies: {},
  bridges: [],
  coins: [
    registryCoin("aaa-one", "1", "peggedUSD", "USD", { geckoId: "aaa" }),
    registryCoin("bbb-two", "2", "peggedUSD", "USD"),
    registryCoin("eea-euro", "11", "peggedEUR", "EUR"),
    registryCoin("eeb-euro", "12", "peggedEUR", "EUR"),
    registryCoin("eec-euro", "13", "peggedEUR", "EUR"),
    registryCoin("eed-euro", "14", "peggedEUR", "EUR"),
    registryCoin("gga-pound", "21", "peggedGBP", "GBP"),
    registryCoin("ggb-pound", "22", "peggedGBP", "GBP"),
    registryCoin("ggc-pound", "23", "peggedGBP", "GBP"),
    registryCoin("ddd-dai", "31", "peggedUSD", "USD", { geckoId: "ddd" }),
    registryCoin("dde-dai", "32", "peggedUSD", "USD", { geckoId: "dde" }),
  ],
  chains: [{ id: "ethereum", name: "Ethereum" }],
};

const cap = (endpoint: string, payload: unknown, observedAt: number, params: Record<string, string> = {}): Capture => ({
  endpoint,
  params,
  observedAt,
  origin: "recorded",
  path: `${endpoint}-${JSON.stringify(params)}.json`,
  sha256: "x",
  payload,
});
const asset = (id: string, pegType: string, price: number | null, units: number) => ({
  id,
  name: id,
  symbol: `S${id}`,
  pegType,
  pegMechanism: "fiat-backed",
  price,
  circulating: { [pegType]: units },
  circulatingPrevDay: { [pegType]: units },
  circulatingPrevWeek: { [pegType]: units },
  circulatingPrevMonth: { [pegType]: units },
});

// ECB: 1 EUR = 1.12 USD = 0.84 GBP on 2025-05-09 (the recorded file's last day): 121 days old at LIST_AT.
const USD_PER_EUR = 1.12;
const GBP_PER_EUR = 0.84;
const captures: Capture[] = [
  cap(
    "defillama.stablecoins",
    {
      peggedAssets: [
        asset("1", "peggedUSD", 1, 1000e6),
        asset("2", "peggedUSD", 1, 200e6),
        asset("11", "peggedEUR", 1.17, 10e6),
        asset("12", "peggedEUR", 1.17, 10e6),
        asset("13", "peggedEUR", 1.16, 10e6),
        asset("14", "peggedEUR", null, 100e6),
        asset("21", "peggedGBP", 1.35, 10e6),
        asset("22", "peggedGBP", 1.35, 10e6),
        asset("23", "peggedGBP", null, 100e6),
      ],
    },
    LIST_AT,
  ),
  cap("frankfurter.rates", { base: "EUR", rates: { "2025-05-09": { USD: USD_PER_EUR, GBP: GBP_PER_EUR } } }, LIST_AT),
  // AAA: CoinGecko market cap 1.5 B at price 1 two days after the list
  cap(
    "coingecko.market_chart",
    { prices: [[(LIST_AT + 2 * DAY) * 1000, 1]], market_caps: [[(LIST_AT + 2 * DAY) * 1000, 1500e6]] },
    LIST_AT + 2 * DAY,
    { id: "aaa" },
  ),
];
// (loadAndModel with a capture list does not select at as-of: each build gets the captures it may see)
const mcCaptures: Capture[] = [
  // DDD / DDE: market caps recorded without a price (a market-cap scrape)
  cap("coingecko.market_chart", { market_caps: [[MC_DAY * 1000, 5212488434.06]] }, MC_DAY + DAY, { id: "ddd" }),
  cap("coingecko.market_chart", { market_caps: [[MC_DAY * 1000, 1000e6]] }, MC_DAY + DAY, { id: "dde" }),
  // DDD: CoinGecko's daily price as Alchemy republishes it
  cap("alchemy.daily_prices", { geckoId: "ddd", points: [{ date: "2023-03-12", price: "0.96699" }] }, MC_DAY + DAY),
  // DDE: no CoinGecko price; DefiLlama's daily price archive quotes it at 0.95 (its consensus)
  cap("defillama.stablecoinprices", [{ date: MC_DAY, prices: { dde: 0.95 } }], MC_DAY + DAY),
];

type Row = Record<string, unknown>;
const builds: Record<string, { db: Db; warnings: string[] }> = {};
const build = async (name: string, asOf: number, given: Capture[]) => {
  const { db, warnings } = await loadAndModel({ asOf, registry, captures: given });
  builds[name] = { db, warnings };
};
const current = async (name: string): Promise<Record<string, Row>> => {
  const rows = await builds[name].db.all<Row>(
    `select stablecoin_id, supply_mode, supply_source, supply_date::varchar as supply_date, circulating_usd,
       supply_unavailable_reason, valuation_basis, usd_per_native from stablecoins order by stablecoin_id`,
  );
  return Object.fromEntries(rows.map((r) => [String(r.stablecoin_id), r]));
};

beforeAll(async () => {
  await build("fresh", LIST_AT + 2 * DAY, captures); // the list is exactly 2 days old: still current
  await build("stale", LIST_AT + 2 * DAY + 1, captures); // one second past its window
  await build("mc", MC_DAY + DAY, mcCaptures);
});
afterAll(() => {
  for (const b of Object.values(builds)) b.db.close();
});

describe("freshness window of the DefiLlama list (2 days)", () => {
  it("uses the list as the current state up to 2 days after its observation", async () => {
    const c = await current("fresh");
    expect(c["aaa-one"]).toMatchObject({ supply_mode: "list", supply_source: "defillama", circulating_usd: 1000e6 });
    expect(c["bbb-two"]).toMatchObject({ supply_mode: "list", circulating_usd: 200e6 });
    expect(builds.fresh.warnings.some((w) => /freshness window/.test(w))).toBe(false);
  });

  it("past its window, the list is history: a fresh point wins, a coin without one is null with its reason", async () => {
    const c = await current("stale");
    // AAA: CoinGecko's market cap of the as-of day (1.5 B / price 1), not the 2-day-old list's 1.0 B
    expect(c["aaa-one"]).toMatchObject({
      supply_mode: "history",
      supply_source: "coingecko-fallback",
      supply_date: "2025-09-09",
      circulating_usd: 1500e6,
    });
    // BBB: priced in the 7 days up to as-of, only the stale list's supply → listed with null supply
    expect(c["bbb-two"]).toMatchObject({
      circulating_usd: null,
      supply_unavailable_reason: "stale-beyond-window",
    });
    expect(builds.stale.warnings.some((w) => /older than its 2-day freshness window/.test(w))).toBe(true);
    // no current figure older than its window feeds a total
    const [chains] = await builds.stale.db.all<{ n: number }>(
      "select count(*)::integer as n from stablecoin_chain_supply where stablecoin_id = 'bbb-two'",
    );
    expect(chains.n).toBe(0);
  });

  it("no published current supply is older than its source's window", async () => {
    for (const name of ["fresh", "stale"]) {
      const bad = await builds[name].db.all<Row>(
        `select s.stablecoin_id from stablecoins s cross join build_context c
         where s.circulating_usd is not null and c.as_of - epoch(s.supply_date) > 3 * 86400`,
      );
      expect(bad).toEqual([]);
    }
  });
});

describe("non-USD pegs whose ECB rate is beyond its window (4 days)", () => {
  it("values a coin without its own price at the same-peg consensus of >= 3 coins (EUR 1.17), not the stale rate", async () => {
    const c = await current("fresh");
    expect(c["eed-euro"]).toMatchObject({ valuation_basis: "consensus", usd_per_native: 1.17 });
    expect(c["eed-euro"].circulating_usd).toBeCloseTo(100e6 * 1.17, 0);
    // coins with their own fresher consensus keep it
    expect(c["eec-euro"]).toMatchObject({ valuation_basis: "consensus", usd_per_native: 1.16 });
  });

  it("keeps the stale ECB rate (fx-stale, disclosed) when fewer than 3 same-peg coins are priced", async () => {
    const c = await current("fresh");
    expect(c["ggc-pound"]).toMatchObject({ valuation_basis: "fx-stale" });
    expect(Number(c["ggc-pound"].usd_per_native)).toBeCloseTo(USD_PER_EUR / GBP_PER_EUR, 12);
  });
});

describe("market cap without its own price", () => {
  const units = async (id: string) =>
    (
      await builds.mc.db.all<{ circulating_native: number; source: string }>(
        `select circulating_native, source from supply_history_daily where stablecoin_id = '${id}' and date = '2023-03-12'`,
      )
    )[0];

  it("is divided by CoinGecko's daily price of its day (DAI 2023-03-12: 5.212 B / 0.96699 = 5.390 B)", async () => {
    const r = await units("ddd-dai");
    expect(r.source).toBe("coingecko-market-cap");
    expect(r.circulating_native).toBeCloseTo(5212488434.06 / 0.96699, 0);
    expect(r.circulating_native / 1e9).toBeCloseTo(5.39, 2);
  });

  it("else by the coin's consensus price at the point's instant, not by the peg's unit value", async () => {
    const r = await units("dde-dai");
    expect(r.circulating_native).toBeCloseTo(1000e6 / 0.95, 0);
  });
});
