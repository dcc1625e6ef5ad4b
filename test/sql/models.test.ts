import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Db } from "../../build/duckdb.ts";
import { loadCaptures } from "../../build/load.ts";
import { discoverModels, runModels } from "../../build/models.ts";
import { ANALYTICS } from "../../pipelines/analytics/analytics.ts";
import { prepareBuildDb } from "../../build/run-build.ts";
import type { Registry } from "../../pipelines/registry/schema.ts";
import type { Capture } from "../../pipelines/sources/types.ts";

const AS_OF = Date.parse("2025-09-07T00:00:00Z") / 1000;
const coin = (id: string, llamaId: string, pegType: string, pegCurrency: string) => ({
  id, llamaId, geckoId: null, name: id, symbol: id.split("-")[0].toUpperCase(), pegType, pegCurrency, pegMechanism: "fiat-backed",
  isDead: false, deadFrom: null, causeOfDeath: null, contracts: [], provenance: ["defillama-list" as const],
});
const registry: Registry = {
  coins: [coin("aaa-one", "1", "peggedUSD", "USD"), coin("eee-euro", "2", "peggedEUR", "EUR"), coin("ccc-chf", "3", "peggedCHF", "CHF")],
  chains: [{ id: "ethereum", name: "Ethereum" }, { id: "tron", name: "Tron" }],
};
const cap = (endpoint: string, payload: unknown, observedAt = AS_OF, params: Record<string, string> = {}): Capture =>
  ({ endpoint, params, observedAt, origin: "recorded", path: `${endpoint}.json`, sha256: "x", payload });
const buckets = (peg: string, cur: number, day: number) => ({ circulating: { [peg]: cur }, circulatingPrevDay: { [peg]: day } });

let db: Db;
beforeAll(async () => {
  db = await Db.open(":memory:", { threads: "1" });
  await prepareBuildDb(db, AS_OF, registry);
  await loadCaptures(db, [
    cap("defillama.stablecoins", { peggedAssets: [
      { id: "1", name: "A", symbol: "AAA", pegType: "peggedUSD", price: null, ...buckets("peggedUSD", 1000, 900),
        chainCirculating: { Ethereum: { current: { peggedUSD: 600 } }, Tron: { current: { peggedUSD: 400 } } } },
      { id: "2", name: "E", symbol: "EEE", pegType: "peggedEUR", price: 1.2, ...buckets("peggedEUR", 100, 100) },
      { id: "3", name: "C", symbol: "CCC", pegType: "peggedCHF", price: null, ...buckets("peggedCHF", 10, 10) },
    ] }),
    cap("frankfurter.rates", { base: "EUR", rates: { "2025-09-05": { USD: 1.1, CHF: 0.9 }, "2025-09-08": { USD: 9, CHF: 9 } } }),
    cap("defillama.stablecoin", { id: "1", chainBalances: { Ethereum: { tokens: [{ date: 1756944000, circulating: { peggedUSD: 7 } }] }, Tron: { tokens: [{ date: 1756944000, circulating: { peggedUSD: 3 } }] } } }, AS_OF, { id: "1" }),
  ], AS_OF);
  await runModels(db, discoverModels(join(import.meta.dirname, "../../pipelines/models"), ANALYTICS));
});
afterAll(() => db.close());

describe("supply models on literal rows", () => {
  it("converts native buckets: price first, then FX of the latest day ≤ as-of, then par for USD", async () => {
    const rows = await db.all<{ stablecoin_id: string; circulating_usd: number; conversion_basis: string }>(
      "select stablecoin_id, circulating_usd, conversion_basis from stablecoins order by stablecoin_id");
    expect(rows).toEqual([
      { stablecoin_id: "aaa-one", circulating_usd: 1000, conversion_basis: "peg-par" },
      { stablecoin_id: "ccc-chf", circulating_usd: expect.closeTo(10 * (1.1 / 0.9), 9), conversion_basis: "fx" },
      { stablecoin_id: "eee-euro", circulating_usd: expect.closeTo(120, 9), conversion_basis: "price" },
    ]);
  });

  it("aggregates chains with dominance against the global total", async () => {
    const rows = await db.all<{ chain_id: string; circulating_usd: number; dominance_share: number; coin_hhi: number }>(
      "select chain_id, circulating_usd, dominance_share, coin_hhi from chain_supply order by chain_id");
    const global = 1000 + 120 + 10 * (1.1 / 0.9);
    expect(rows.map((r) => r.chain_id)).toEqual(["ethereum", "tron"]);
    expect(rows[0].circulating_usd).toBe(600);
    expect(rows[0].dominance_share).toBeCloseTo(600 / global, 9);
    expect(rows[1].coin_hhi).toBeCloseTo(1, 9);
  });

  it("prefers detail history over list points and sums chains when the upstream total is absent", async () => {
    const rows = await db.all<{ date: string; circulating_native: number; source: string }>(
      "select date::varchar as date, circulating_native, source from supply_history_daily where stablecoin_id = 'aaa-one' order by date");
    expect(rows.find((r) => r.date === "2025-09-04")).toEqual({ date: "2025-09-04", circulating_native: 10, source: "defillama-detail" });
    expect(rows.find((r) => r.date === "2025-09-07")?.source).toBe("defillama-list");
    expect(rows.find((r) => r.date === "2025-09-06")).toBeTruthy();
  });

  it("computes non-USD share only over fully observed days", async () => {
    const rows = await db.all<{ date: string; fiat_non_usd_share_pct: number }>("select date::varchar as date, fiat_non_usd_share_pct from non_usd_share_daily order by date");
    const euro = 120 + 10 * (1.1 / 0.9);
    expect(rows.at(-1)!.fiat_non_usd_share_pct).toBeCloseTo(Math.round((euro / (1000 + euro)) * 100 * 1e4) / 1e4, 4);
  });
});
