import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dexLiquidityScore, hhi, type CoinPool } from "../../pipelines/analytics/dex-liquidity.ts";
import { MIN_POOL_TVL_USD } from "../../pipelines/analytics/dex-liquidity.version.ts";
import { buildCoinIndex, matchPool, type MatchCoin, poolTokens } from "../../pipelines/analytics/pool-matching.ts";
import { curvePoolsEndpoint, fetchCurvePools } from "../../pipelines/sources/curve/curve.ts";
import { dexSubgraphPoolsEndpoint, fetchSubgraphPools } from "../../pipelines/sources/dex-subgraph/dex-subgraph.ts";
import {
  fetchYieldPools,
  readOpenDefiYieldsCsv,
  yieldPoolsEndpoint,
} from "../../pipelines/sources/defillama-yields/defillama-yields.ts";
import { HttpClient, UpstreamError } from "../../pipelines/sources/http-client.ts";
import type { Capture } from "../../pipelines/sources/types.ts";
import { must } from "../helpers/must.ts";

// Small project-made fixtures: a registry of five coins and pools shaped like DefiLlama's /pools.
const COINS: MatchCoin[] = [
  {
    id: "usdc-circle",
    symbol: "USDC",
    contracts: [{ chain: "ethereum", address: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48" }],
    supplyChains: ["ethereum", "base"],
  },
  {
    id: "usdt-tether",
    symbol: "USDT",
    contracts: [{ chain: "ethereum", address: "0xdac17f958d2ee523a2206206994597c13d831ec7" }],
    supplyChains: ["ethereum", "tron"],
  },
  { id: "susds-sky", symbol: "sUSDS", contracts: [], supplyChains: ["ethereum"] },
  { id: "usds-sky", symbol: "USDS", contracts: [], supplyChains: ["ethereum", "arbitrum"] },
  { id: "usds-the-standard", symbol: "USDS", contracts: [], supplyChains: ["arbitrum"] },
  { id: "usdy-ondo", symbol: "USDY", contracts: [], supplyChains: ["ethereum"] },
];
const index = buildCoinIndex(COINS);
const pool = (symbol: string, chain: string, extra: Partial<Parameters<typeof matchPool>[0]> = {}) => ({
  poolId: `p-${symbol}-${chain}`,
  chain,
  symbol,
  isStablecoin: true,
  underlyingTokens: null,
  ...extra,
});
const brief = (rows: ReturnType<typeof matchPool>) =>
  rows.map((r) => [r.token, r.stablecoinId, r.matchMethod, r.unmatchedReason, r.candidateIds]);

describe("pool → coin matching", () => {
  it("by underlying token address against registry contracts of the pool's chain (case-insensitive)", () => {
    const rows = matchPool(
      pool("USDC-USDT-WETH", "ethereum", {
        underlyingTokens: [
          "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
          "0xDAC17F958D2EE523A2206206994597C13D831EC7",
          "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2",
        ],
      }),
      index,
    );
    expect(brief(rows)).toEqual([
      ["0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", "usdc-circle", "address", null, []],
      ["0xDAC17F958D2EE523A2206206994597C13D831EC7", "usdt-tether", "address", null, []],
      ["0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2", null, "address", "no-stablecoin-token", []],
    ]);
    // the same address on another chain is not that coin's deployment
    expect(
      matchPool(pool("USDC", "base", { underlyingTokens: ["0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"] }), index)[0]
        .unmatchedReason,
    ).toBe("no-stablecoin-token");
  });

  it("by symbol within the chain when the pool gives no addresses: one row per token, case-insensitive", () => {
    expect(poolTokens("USDC-USDT/ DAI")).toEqual(["USDC", "USDT", "DAI"]);
    expect(brief(matchPool(pool("SUSDS", "ethereum"), index))).toEqual([
      ["SUSDS", "susds-sky", "symbol-chain", null, ["susds-sky"]],
    ]);
    const two = matchPool(pool("USDC-USDT", "ethereum"), index);
    expect(brief(two)).toEqual([
      ["USDC", "usdc-circle", "symbol-chain", null, ["usdc-circle"]],
      ["USDT", "usdt-tether", "symbol-chain", null, ["usdt-tether"]],
    ]);
    expect(two.map((r) => r.chainEvidence)).toEqual(["contract", "contract"]);
    expect(matchPool(pool("USDT", "tron"), index)[0]).toMatchObject({
      stablecoinId: "usdt-tether",
      chainEvidence: "chain-supply",
    });
  });

  it("an ambiguous symbol is unmatched with its candidates; coins known elsewhere are ruled out", () => {
    expect(brief(matchPool(pool("USDS", "arbitrum"), index))).toEqual([
      ["USDS", null, "symbol-chain", "ambiguous-symbol", ["usds-sky", "usds-the-standard"]],
    ]);
    // on Ethereum only usds-sky has a deployment: matched
    expect(matchPool(pool("USDS", "ethereum"), index)[0].stablecoinId).toBe("usds-sky");
  });

  it("unknown symbols: `unknown-symbol` in a stablecoin pool, `no-stablecoin-token` otherwise; a known coin on another chain is `not-on-chain`", () => {
    expect(brief(matchPool(pool("STEAKUSDC", "base"), index))).toEqual([
      ["STEAKUSDC", null, "symbol-chain", "unknown-symbol", []],
    ]);
    expect(matchPool(pool("STETH", "ethereum", { isStablecoin: false }), index)[0].unmatchedReason).toBe(
      "no-stablecoin-token",
    );
    expect(brief(matchPool(pool("USDY", "stellar"), index))).toEqual([
      ["USDY", null, "symbol-chain", "not-on-chain", ["usdy-ondo"]],
    ]);
  });
});

const cp = (
  poolId: string,
  project: string,
  chain: string,
  tvlUsd: number,
  volume24hUsd: number | null = null,
): CoinPool => ({
  poolId,
  project,
  chain,
  symbol: "USDC",
  tvlUsd,
  volume24hUsd,
  volume7dUsd: null,
  apy: null,
  poolMeta: null,
});

describe("DEX liquidity score ballast-dex-liquidity-v1 (hand-computed)", () => {
  it("two pools, no volume: depth, concentration, spread and pool count renormalised over 0.80", () => {
    // tvl 40M: depth = 35 log10(40e6/7e5) = 61.4937; HHI = 0.25² + 0.75² = 0.625 → 37.5;
    // spread = ½·25 + ½·25 = 25; poolCount = 10 → (0.35·61.4937 + 0.2·37.5 + 0.15·25 + 0.1·10) / 0.8 = 42.216 → 42
    const s = dexLiquidityScore([cp("a", "curve", "ethereum", 10e6), cp("b", "aave-v3", "arbitrum", 30e6)]);
    expect(s).toMatchObject({
      score: 42,
      components: { depth: 61.49, activity: null, concentration: 37.5, spread: 25, poolCount: 10 },
      totalTvlUsd: 40e6,
      poolCount: 2,
      protocolCount: 2,
      chainCount: 2,
      hhi: 0.625,
      totalVolume24hUsd: null,
      totalVolume7dUsd: null,
      volumeCoverageShare: 0,
      activityStatus: "activity-missing",
      unavailableReason: null,
    });
    expect(s.warning).toMatch(/^activity-missing: none of the 2 retained pools reports a 24 h volume/);
  });

  it("with volumes on every pool the activity component joins at weight 0.20", () => {
    // vol 4M / tvl 40M = 0.1 → 38 (log10 0.1 + 3) = 76; (33.7728 + 0.2·76) / 1.0 = 48.97 → 49
    const s = dexLiquidityScore([cp("a", "curve", "ethereum", 10e6, 1e6), cp("b", "aave-v3", "arbitrum", 30e6, 3e6)]);
    expect(s).toMatchObject({
      score: 49,
      components: { activity: 76 },
      totalVolume24hUsd: 4e6,
      activityStatus: "observed",
      warning: null,
      volumeCoverageShare: 1,
    });
  });

  it("volume on under half the TVL: activity left out, warning, totals null (never 0)", () => {
    const s = dexLiquidityScore([cp("a", "curve", "ethereum", 10e6, 1e6), cp("b", "aave-v3", "arbitrum", 30e6)]);
    expect(s).toMatchObject({
      score: 42,
      activityStatus: "activity-coverage-below-floor",
      totalVolume24hUsd: null,
      volumeCoverageShare: 0.25,
    });
    expect(s.warning).toMatch(/^activity-coverage-below-floor: .*25%/);
  });

  it("no retained pool (none, or all under $10,000): score null with reason no-retained-pools", () => {
    for (const pools of [[], [cp("a", "curve", "ethereum", MIN_POOL_TVL_USD - 1)]]) {
      expect(dexLiquidityScore(pools)).toMatchObject({
        score: null,
        components: null,
        hhi: null,
        unavailableReason: "no-retained-pools",
        totalVolume24hUsd: null,
      });
    }
    expect(hhi([1, 1, 2])).toBeCloseTo(0.375, 10);
  });
});

// --- sources: parsers and live clients against a local node:http server -----------------------------

const OBSERVED = Date.parse("2026-09-02T11:57:41Z") / 1000;
const capture = (endpoint: string, payload: unknown, params: Record<string, string> = {}): Capture => ({
  endpoint,
  params,
  observedAt: OBSERVED,
  origin: "live",
  path: "x",
  sha256: "x",
  payload,
});

describe("DefiLlama yields parser and recorded reader", () => {
  it("keeps good pools, nulls empty APYs (never 0), drops bad ones by reason", () => {
    const data = [
      {
        pool: "p1",
        chain: "Ethereum",
        project: "maple",
        symbol: "USDC",
        tvlUsd: 1e9,
        apy: 5,
        apyBase: 5,
        apyReward: null,
        stablecoin: true,
        underlyingTokens: ["0xA"],
        volumeUsd1d: null,
      },
      { pool: "p2", chain: "Ethereum", project: "x", symbol: "USDT", tvlUsd: "abc" },
      { pool: "p3", chain: "Ethereum", project: "x", symbol: "USDT", tvlUsd: 5, apy: "bad" },
      { pool: "p4", chain: "", project: "x", symbol: "USDT", tvlUsd: 5 },
      { pool: "p1", chain: "Ethereum", project: "maple", symbol: "USDC", tvlUsd: 1 },
      { pool: "p5", chain: "Base", project: "x", symbol: "USDC", tvlUsd: 5, stablecoin: "maybe" },
      "junk",
    ];
    const out = yieldPoolsEndpoint.toRows(
      yieldPoolsEndpoint.payloadSchema.parse({ status: "success", data }),
      capture("defillama-yields.pools", {}),
    );
    expect(out.rows).toHaveLength(1);
    expect(out.rows[0]).toMatchObject({
      pool_id: "p1",
      apy_reward: null,
      apy_pct_1d: null,
      underlying_tokens_json: '["0xA"]',
      observed_day: "2026-09-02",
      is_stablecoin: true,
    });
    expect(out.dropped).toEqual({
      "tvl-invalid": 1,
      "apy-invalid": 1,
      "chain-missing": 1,
      "duplicate-pool": 1,
      "stablecoin-flag-invalid": 1,
      "pool-invalid": 1,
    });
  });

  it("the CSV reader keeps rows of the declared scrape only", () => {
    const head =
      "poolId,project,chain,symbol,tvlUsd,apy,apyBase,apyReward,apyPct1D,apyPct7D,stablecoin,ilRisk,exposure,poolMeta,outlier,scrapedAt";
    const text = [
      head,
      "a,maple,Ethereum,USDC,100,1,1,,0,0,true,no,single,Syrup USDC,false,2026-09-02T11:57:41.317Z",
      "b,maple,Ethereum,USDT,100,1,1,,0,0,true,no,single,,false,2026-09-01T11:57:41.317Z",
      "c,maple,Ethereum,USDT,100,1,1,,0,0,true,no,single,,false,yesterday",
    ].join("\n");
    const out = readOpenDefiYieldsCsv(OBSERVED)(text);
    expect(out.dropped).toEqual({ "scraped-at-mismatch": 1, "scraped-at-invalid": 1 });
    const rows = yieldPoolsEndpoint.toRows(out.captures[0].payload, capture("defillama-yields.pools", {}));
    expect(rows.rows).toEqual([
      expect.objectContaining({
        pool_id: "a",
        symbol: "USDC",
        apy_reward: null,
        pool_meta: "Syrup USDC",
        outlier: false,
        underlying_tokens_json: null,
        volume_usd_1d: null,
      }),
    ]);
  });
});

const FIXTURES: Record<string, { status?: number; body: string; delayMs?: number }> = {
  "/pools": {
    body: JSON.stringify({
      status: "success",
      data: [{ pool: "p1", chain: "Ethereum", project: "curve-dex", symbol: "USDC-USDT", tvlUsd: 2e7 }],
    }),
  },
  "/bad/pools": { body: JSON.stringify({ status: "success", data: "nope" }) },
  "/v1/getPools/ethereum/main": {
    body: JSON.stringify({
      success: true,
      data: {
        poolData: [
          {
            address: "0xPOOL",
            name: "3pool",
            usdTotal: 1.5e8,
            amplificationCoefficient: "4000",
            isMetaPool: false,
            coins: [
              { address: "0xA0b8", symbol: "USDC", decimals: "6", usdPrice: 1, poolBalance: "50000000000000" },
              { address: "0xdAC1", symbol: "USDT", decimals: 6, usdPrice: 1, poolBalance: "x" },
            ],
          },
          { name: "no address", usdTotal: 1, coins: [] },
        ],
      },
    }),
  },
  "/v1/getPools/ethereum/broken": { body: "<html>" },
  "/v1/getPools/ethereum/slow": { body: "{}", delayMs: 1500 },
  "/v1/getPools/ethereum/fail": { body: JSON.stringify({ success: false, err: "x" }) },
  "/subgraphs/uni": {
    body: JSON.stringify({
      data: {
        pools: [
          {
            id: "0xP",
            feeTier: "100",
            totalValueLockedUSD: "3e7",
            token0: { id: "0xA0B8", symbol: "USDC" },
            token1: { id: "0xDAC1", symbol: "USDT" },
            poolDayDatas: [{ date: 1788307200, volumeUSD: "1200000" }],
          },
        ],
      },
    }),
  },
  "/subgraphs/err": { body: JSON.stringify({ errors: [{ message: "indexer unavailable" }] }) },
  "/subgraphs/odd": { body: JSON.stringify({ data: { pairs: [] } }) },
};

let server: Server;
let base: string;
const seen: { method: string; url: string; body: string }[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", body });
      const f = FIXTURES[req.url ?? ""];
      const send = () => {
        res.writeHead(f ? (f.status ?? 200) : 404, { "content-type": "application/json" });
        res.end(f ? f.body : "{}");
      };
      if (f?.delayMs) setTimeout(send, f.delayMs);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(
  () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
);

const client = (name: string, over: Partial<ConstructorParameters<typeof HttpClient>[0]> = {}) =>
  new HttpClient({ name, baseUrl: base, retries: 0, backoffMs: 5, timeoutMs: 1000, ...over });
const failure = (p: Promise<unknown>): Promise<UpstreamError> =>
  p.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: UpstreamError) => e,
  );

describe("live clients (DefiLlama yields, Curve, DEX subgraph) against a local node:http server", () => {
  it("yields: fetches /pools; a malformed payload is an error naming the source", async () => {
    const body = await must(yieldPoolsEndpoint.fetchLive, "defillama-yields.pools fetchLive")(
      client("defillama-yields"),
      {},
    );
    expect((body as { data: unknown[] }).data).toHaveLength(1);
    const err = await failure(fetchYieldPools(client("defillama-yields", { baseUrl: `${base}bad/` })));
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.message).toMatch(/^defillama-yields: pools returned a payload that is not a pool list \(data: /);
  });

  it("curve: fetches getPools and parses one row per pool coin; bad coins and pools are counted", async () => {
    const payload = await must(curvePoolsEndpoint.fetchLive, "curve.pools fetchLive")(client("curve"), {
      chain: "ethereum",
      registry: "main",
    });
    const out = curvePoolsEndpoint.toRows(
      curvePoolsEndpoint.payloadSchema.parse(payload),
      capture("curve.pools", payload, { chain: "ethereum", registry: "main" }),
    );
    expect(out.rows).toEqual([
      expect.objectContaining({
        pool_address: "0xpool",
        coin_address: "0xa0b8",
        coin_symbol: "USDC",
        coin_decimals: 6,
        amplification: 4000,
        tvl_usd: 1.5e8,
        coin_balance_raw: "50000000000000",
      }),
    ]);
    expect(out.dropped).toEqual({ "coin-value-invalid": 1, "pool-invalid": 1 });
  });

  it("curve: non-JSON, success:false and timeouts are UpstreamErrors naming `curve`", async () => {
    expect((await failure(fetchCurvePools(client("curve"), "ethereum", "broken"))).message).toBe(
      "curve: v1/getPools/ethereum/broken returned a non-JSON body",
    );
    expect((await failure(fetchCurvePools(client("curve"), "ethereum", "fail"))).message).toMatch(
      /^curve: v1\/getPools\/ethereum\/fail returned a payload that is not a pool list/,
    );
    // The fixture answers after 1.5 s, ten times the 150 ms timeout: failing (rather than succeeding
    // late) means the timeout fired. Its latency is measured by `make bench` (scripts/bench/fault-latency.ts).
    const before = seen.filter((s) => s.url === "/v1/getPools/ethereum/slow").length;
    const slow = await failure(fetchCurvePools(client("curve", { timeoutMs: 150 }), "ethereum", "slow"));
    expect(slow.source).toBe("curve");
    expect(slow.status).toBeUndefined();
    expect(slow.message).toMatch(/^curve: v1\/getPools\/ethereum\/slow failed: .*(timeout|aborted)/i);
    // retries: 0: exactly one request (logged when its body ended, before the delayed answer).
    expect(seen.filter((s) => s.url === "/v1/getPools/ethereum/slow").length - before).toBe(1);
  });

  it("subgraph: POSTs the GraphQL query and parses pools; GraphQL errors and odd shapes name `dex-subgraph`", async () => {
    const payload = await must(dexSubgraphPoolsEndpoint.fetchLive, "dex-subgraph.pools fetchLive")(
      client("dex-subgraph"),
      {
        subgraph: "subgraphs/uni",
        chain: "ethereum",
      },
    );
    const post = must(
      seen.find((s) => s.url === "/subgraphs/uni"),
      "the request to /subgraphs/uni",
    );
    expect(post.method).toBe("POST");
    expect(JSON.parse(post.body).query).toMatch(/pools\(first: 500, orderBy: totalValueLockedUSD/);
    const out = dexSubgraphPoolsEndpoint.toRows(
      dexSubgraphPoolsEndpoint.payloadSchema.parse(payload),
      capture("dex-subgraph.pools", payload, { subgraph: "uni", chain: "ethereum" }),
    );
    expect(out.rows).toEqual([
      expect.objectContaining({
        pool_address: "0xp",
        fee_tier: 100,
        tvl_usd: 3e7,
        token0_address: "0xa0b8",
        day_date: "2026-09-02",
        day_volume_usd: 1.2e6,
      }),
    ]);
    expect((await failure(fetchSubgraphPools(client("dex-subgraph"), "subgraphs/err"))).message).toBe(
      "dex-subgraph: subgraphs/err answered GraphQL errors: indexer unavailable",
    );
    expect((await failure(fetchSubgraphPools(client("dex-subgraph"), "subgraphs/odd"))).message).toMatch(
      /^dex-subgraph: subgraphs\/odd returned a payload that is not a pool list/,
    );
  });
});
