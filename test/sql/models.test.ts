import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../build/duckdb.ts";
import { loadAndModel } from "../../build/stages/model.ts";
import type { Registry } from "../../pipelines/registry/schema.ts";
import type { Capture } from "../../pipelines/sources/types.ts";
import { must } from "../helpers/must.ts";
import { registryCoin } from "../helpers/registry-coin.ts";

const AS_OF = Date.parse("2025-09-07T00:00:00Z") / 1000;
const DAY = 86400;
const registry: Registry = {
  eventFamilies: {},
  bridges: [],
  coins: [
    registryCoin("aaa-one", "1", "peggedUSD", "USD", { geckoId: "aaa" }),
    registryCoin("eee-euro", "2", "peggedEUR", "EUR"),
    registryCoin("ccc-chf", "3", "peggedCHF", "CHF"),
    registryCoin("fff-float", "4", "peggedVAR", "VAR", { floatingPeg: true, pegMechanism: "crypto-backed" }),
    registryCoin("nnn-nav", "5", "peggedEUR", "EUR", { navToken: true }),
    registryCoin("hhh-huge", "6", "peggedGBP", "GBP"),
    registryCoin("jjj-jump", "7", "peggedUSD", "USD"),
    registryCoin("kkk-small", "8", "peggedUSD", "USD"),
    registryCoin("ggg-chains", "10", "peggedUSD", "USD"),
  ],
  chains: [
    { id: "ethereum", name: "Ethereum" },
    { id: "tron", name: "Tron" },
  ],
};
const cap = (endpoint: string, payload: unknown, observedAt = AS_OF, params: Record<string, string> = {}): Capture => ({
  endpoint,
  params,
  observedAt,
  origin: "recorded",
  path: `${endpoint}.json`,
  sha256: "x",
  payload,
});
/** List buckets: current, 1, 7 and 30 days before. */
const buckets = (peg: string, cur: number, day: number, week = day, month = week) => ({
  circulating: { [peg]: cur },
  circulatingPrevDay: { [peg]: day },
  circulatingPrevWeek: { [peg]: week },
  circulatingPrevMonth: { [peg]: month },
});
const chain = (peg: string, cur: number, day = cur) => ({
  current: { [peg]: cur },
  circulatingPrevDay: { [peg]: day },
});
const asset = (
  id: string,
  symbol: string,
  pegType: string,
  price: number | null,
  b: object,
  chainCirculating: object = {},
) => ({ id, name: symbol, symbol, pegType, pegMechanism: "fiat-backed", price, ...b, chainCirculating });

// CoinGecko reports 1% fewer units of AAA than DefiLlama (a different circulating definition): the
// list days (as-of, -1, -7, -30) and CoinGecko days in between alternate sources.
const cgDays = Array.from({ length: 31 }, (_, i) => AS_OF - (30 - i) * DAY);
const EUR_USD = 1.1,
  CHF_PER_EUR = 0.9,
  GBP_PER_EUR = 0.8;

let db: Db;
let warnings: string[];
beforeAll(async () => {
  ({ db, warnings } = await loadAndModel({
    asOf: AS_OF,
    registry,
    captures: [
      cap("defillama.stablecoins", {
        peggedAssets: [
          // a list price far above the bound (3.0 for a USD coin) is rejected and values nothing
          asset("1", "AAA", "peggedUSD", 3.0, buckets("peggedUSD", 1000, 1000, 1000, 1000), {
            Ethereum: chain("peggedUSD", 600, 590),
            Tron: chain("peggedUSD", 400, 410),
          }),
          asset("2", "EEE", "peggedEUR", 5.0, buckets("peggedEUR", 100, 100)),
          asset("3", "CCC", "peggedCHF", null, buckets("peggedCHF", 10, 10)),
          asset("4", "FFF", "peggedVAR", 1.5, buckets("peggedVAR", 20, 20)),
          asset("5", "NNN", "peggedEUR", 1.32, buckets("peggedEUR", 50, 50)),
          asset("6", "HHH", "peggedGBP", 1.375, buckets("peggedGBP", 9e12, 1e9)),
          asset("7", "JJJ", "peggedUSD", 1, buckets("peggedUSD", 5e8, 2e6)),
          asset("8", "KKK", "peggedUSD", 1, buckets("peggedUSD", 5e5, 1e3)),
          asset("10", "GGG", "peggedUSD", 1, buckets("peggedUSD", 1000, 1000), {
            Ethereum: chain("peggedUSD", 9e9, 2e6),
            Tron: chain("peggedUSD", 1000, 500),
          }),
          // not in the registry: published as unreviewed
          asset("9", "ZZZ", "peggedUSD", 1, buckets("peggedUSD", 100, 100)),
        ],
      }),
      cap("frankfurter.rates", {
        base: "EUR",
        rates: {
          "2025-09-05": { USD: EUR_USD, CHF: CHF_PER_EUR, GBP: GBP_PER_EUR },
          "2025-09-08": { USD: 9, CHF: 9, GBP: 9 }, // after as-of: never used
        },
      }),
      cap(
        "coingecko.market_chart",
        {
          prices: cgDays.map((t) => [t * 1000, 1.0]),
          market_caps: cgDays.map((t) => [t * 1000, 990]),
        },
        AS_OF,
        { id: "aaa" },
      ),
      cap(
        "defillama.stablecoin",
        {
          id: "3",
          chainBalances: {
            Ethereum: { tokens: [{ date: AS_OF - 3 * DAY, circulating: { peggedCHF: 7 } }] },
            Tron: { tokens: [{ date: AS_OF - 3 * DAY, circulating: { peggedCHF: 3 } }] },
          },
        },
        AS_OF,
        { id: "3" },
      ),
    ],
  }));
});
afterAll(() => db.close());

const usdPerChf = EUR_USD / CHF_PER_EUR;
const usdPerGbp = EUR_USD / GBP_PER_EUR;

describe("supply valuation: one rule for every source (item 1, 2)", () => {
  it("values native units at the peg's unit value of the day: par, ECB rate, consensus price", async () => {
    const rows = await db.all<{ stablecoin_id: string; circulating_usd: number | null; valuation_basis: string }>(
      "select stablecoin_id, circulating_usd, valuation_basis from stablecoins where stablecoin_id in ('aaa-one', 'ccc-chf', 'eee-euro', 'fff-float', 'nnn-nav') order by stablecoin_id",
    );
    expect(rows).toEqual([
      { stablecoin_id: "aaa-one", circulating_usd: 1000, valuation_basis: "par" },
      { stablecoin_id: "ccc-chf", circulating_usd: expect.closeTo(10 * usdPerChf, 9), valuation_basis: "fx" },
      { stablecoin_id: "eee-euro", circulating_usd: expect.closeTo(100 * EUR_USD, 9), valuation_basis: "fx" },
      { stablecoin_id: "fff-float", circulating_usd: expect.closeTo(20 * 1.5, 9), valuation_basis: "consensus" },
      { stablecoin_id: "nnn-nav", circulating_usd: expect.closeTo(50 * 1.32, 9), valuation_basis: "consensus" },
    ]);
  });

  it("never values supply with a rejected price (3.0 for a USD coin, 5.0 for a EUR coin)", async () => {
    const rejected = await db.all<{ stablecoin_id: string; reason: string }>(
      "select distinct stablecoin_id, reason from price_observation_rejections where stablecoin_id in ('aaa-one', 'eee-euro') order by all",
    );
    expect(rejected.map((r) => r.stablecoin_id)).toEqual(["aaa-one", "eee-euro"]);
    const [usd] = await db.all<{ n: number }>(
      "select count(*)::integer as n from supply_history_daily where stablecoin_id in ('aaa-one', 'eee-euro') and circulating_usd > 1.2 * circulating_native",
    );
    expect(usd.n).toBe(0);
  });

  it("uses the same rule in the list, the history and the chains", async () => {
    const [m] = await db.all<{ list: number; hist: number; chains: number }>(`
      select s.circulating_usd as list, h.circulating_usd as hist, (select sum(circulating_usd) from stablecoin_chain_supply where stablecoin_id = 'aaa-one') as chains
      from stablecoins s inner join supply_history_daily h on h.stablecoin_id = s.stablecoin_id and h.date = s.supply_date
      where s.stablecoin_id = 'aaa-one'`);
    expect(m).toEqual({ list: 1000, hist: 1000, chains: 1000 });
    const [prev] = await db.all<{ prev_day_usd: number }>(
      "select prev_day_usd from stablecoins where stablecoin_id = 'eee-euro'",
    );
    expect(prev.prev_day_usd).toBeCloseTo(100 * EUR_USD, 9);
    const ch = await db.all<{ chain_id: string; prev_day_usd: number }>(
      "select chain_id, prev_day_usd from stablecoin_chain_supply where stablecoin_id = 'aaa-one' order by chain_id",
    );
    expect(ch).toEqual([
      { chain_id: "ethereum", prev_day_usd: 590 },
      { chain_id: "tron", prev_day_usd: 410 },
    ]);
  });

  it("has no sawtooth when CoinGecko fills days between list points (level-adjusted to DefiLlama)", async () => {
    const rows = await db.all<{ date: string; usd: number; source: string }>(
      "select date::varchar as date, circulating_usd as usd, source from supply_history_daily where stablecoin_id = 'aaa-one' order by date",
    );
    expect(rows.length).toBe(31);
    expect(new Set(rows.map((r) => r.source))).toEqual(new Set(["defillama-list", "coingecko-market-cap"]));
    const [adj] = await db.all<{ a: number }>(
      "select max(level_adjustment) as a from supply_history_daily where stablecoin_id = 'aaa-one'",
    );
    expect(adj.a).toBeCloseTo(1000 / 990, 9); // without it the series would alternate 1000 / 990
    for (const r of rows) expect(r.usd).toBeCloseTo(1000, 6);
    for (let i = 1; i + 1 < rows.length; i++) {
      const a = rows[i].usd / rows[i - 1].usd - 1,
        b = rows[i + 1].usd / rows[i].usd - 1;
      expect(
        Math.abs(a) >= 0.005 && Math.abs(b) >= 0.005 && Math.sign(a) !== Math.sign(b),
        `sawtooth at ${rows[i].date}`,
      ).toBe(false);
    }
  });

  it("prefers detail history over list points and sums chains when the upstream total is absent", async () => {
    const rows = await db.all<{ date: string; circulating_native: number; source: string }>(
      "select date::varchar as date, circulating_native, source from supply_history_daily where stablecoin_id = 'ccc-chf' order by date",
    );
    expect(rows.find((r) => r.date === "2025-09-04")).toEqual({
      date: "2025-09-04",
      circulating_native: 10,
      source: "defillama-detail",
    });
    expect(rows.find((r) => r.date === "2025-09-07")?.source).toBe("defillama-list");
  });

  it("aggregates chains with dominance against the global total", async () => {
    const rows = await db.all<{ chain_id: string; circulating_usd: number; dominance_share: number }>(
      "select chain_id, circulating_usd, dominance_share from chain_supply order by chain_id",
    );
    const [{ total }] = await db.all<{ total: number }>("select sum(circulating_usd) as total from stablecoins");
    expect(rows.map((r) => r.chain_id)).toEqual(["ethereum", "tron"]);
    expect(rows[0].circulating_usd).toBe(600); // GGG's implausible Ethereum value is rejected
    expect(rows[0].dominance_share).toBeCloseTo(600 / total, 9);
  });
});

describe("implausible supply values (item 3)", () => {
  it("rejects USD supply above $10T and above 100x the previous day (floor $1M), and records them", async () => {
    const rej = await db.all<{ stablecoin_id: string; date: string; reason: string; chain_id: string | null }>(
      "select stablecoin_id, date::varchar as date, reason, chain_id from supply_value_rejections order by stablecoin_id, date",
    );
    expect(rej).toEqual([
      { stablecoin_id: "ggg-chains", date: "2025-09-07", reason: "over-100x-previous-day", chain_id: "ethereum" },
      { stablecoin_id: "hhh-huge", date: "2025-09-07", reason: "above-10t-usd", chain_id: null },
      { stablecoin_id: "jjj-jump", date: "2025-09-07", reason: "over-100x-previous-day", chain_id: null },
    ]);
    const hist = await db.all<{ n: number }>(
      "select count(*)::integer as n from supply_history_daily where (stablecoin_id, date) in (select stablecoin_id, date from supply_value_rejections where chain_id is null)",
    );
    expect(hist[0].n).toBe(0);
    // below the $1M floor a 500x jump is a launch, not an error
    const [kkk] = await db.all<{ circulating_usd: number }>(
      "select circulating_usd from stablecoins where stablecoin_id = 'kkk-small'",
    );
    expect(kkk.circulating_usd).toBe(5e5);
  });

  it("falls back to the latest accepted point for a listed coin whose current value is rejected", async () => {
    const rows = await db.all<{
      stablecoin_id: string;
      circulating_usd: number;
      supply_date: string;
      supply_source: string;
    }>(
      "select stablecoin_id, circulating_usd, supply_date::varchar as supply_date, supply_source from stablecoins where stablecoin_id in ('hhh-huge', 'jjj-jump') order by 1",
    );
    expect(rows).toEqual([
      {
        stablecoin_id: "hhh-huge",
        circulating_usd: expect.closeTo(1e9 * usdPerGbp, 3),
        supply_date: "2025-09-06",
        supply_source: "defillama-history-gap-fill",
      },
      {
        stablecoin_id: "jjj-jump",
        circulating_usd: 2e6,
        supply_date: "2025-09-06",
        supply_source: "defillama-history-gap-fill",
      },
    ]);
    const [{ chains }] = await db.all<{ chains: number }>(
      "select sum(circulating_usd) as chains from stablecoin_chain_supply where stablecoin_id = 'ggg-chains'",
    );
    expect(chains).toBe(1000);
  });
});

describe("non-USD share (item 5)", () => {
  it("gives floating pegs their own group; NAV tokens count with their peg currency", async () => {
    const rows = await db.all<Record<string, number | string>>(
      "select date::varchar as date, * exclude (date) from non_usd_share_daily order by date",
    );
    const last = must(rows.at(-1), "the last non_usd_share_daily row");
    expect(last.date).toBe("2025-09-07");
    const fiat = 100 * EUR_USD + 10 * usdPerChf + 50 * 1.32; // EEE, CCC, NNN (NAV token, EUR peg)
    const floating = 20 * 1.5;
    const usd = 1000 + 5e5 + 1000 + 100; // AAA, KKK, GGG, ZZZ (HHH and JJJ rejected)
    const total = fiat + floating + usd;
    expect(last.total_usd).toBeCloseTo(total, 2);
    expect(last.fiat_non_usd_usd).toBeCloseTo(fiat, 2);
    expect(last.floating_usd).toBeCloseTo(floating, 2);
    expect(last.commodity_usd).toBe(0);
    expect(last.floating_share_pct).toBeCloseTo(Math.round((floating / total) * 100 * 1e4) / 1e4, 4);
    expect(last.fiat_non_usd_share_pct).toBeCloseTo(Math.round((fiat / total) * 100 * 1e4) / 1e4, 4);
  });
});

describe("unreviewed upstream coins (item 6)", () => {
  it("publishes an unknown list coin with a provisional id and warns", async () => {
    const [z] = await db.all<{ stablecoin_id: string; unreviewed: boolean; circulating_usd: number }>(
      "select stablecoin_id, unreviewed, circulating_usd from stablecoins where symbol = 'ZZZ'",
    );
    expect(z).toEqual({ stablecoin_id: "zzz-unreviewed-9", unreviewed: true, circulating_usd: 100 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/zzz-unreviewed-9/);
  });
});
