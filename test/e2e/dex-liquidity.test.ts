import { rmSync } from "node:fs";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { createApp } from "../../api/app.ts";
import { DexLiquidityHistorySchema, type DexLiquidity, DexLiquiditySchema } from "../../site-data/dex-liquidity.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { buildCaptureAsOf } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";
import { serveDir } from "../helpers/served-build.ts";

// One build as of 2026-09-03 (the recorded DefiLlama yields sample was observed 2026-09-02T11:57:41Z;
// the default build as of 2025-09-07 has no pools and answers 503 (both routes): test/api/app.test.ts).
const AS_OF = Date.parse("2026-09-03T00:00:00Z") / 1000;
const OBSERVED = Math.floor(Date.parse("2026-09-02T11:57:41.317Z") / 1000);

let dir: string;
let manifest: BuildManifest;
let matches: Record<
  string,
  {
    token: string;
    chain: string;
    stablecoin_id: string | null;
    match_method: string;
    unmatched_reason: string | null;
    candidate_ids: string | null;
  }
>;
let pools: Record<string, Record<string, unknown>>;
let served: Awaited<ReturnType<typeof serveDir>>;
let app: ReturnType<typeof createApp>;
let token: string;
let body: DexLiquidity;

beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  ({ dir, manifest } = await buildCaptureAsOf(AS_OF, "ballast-dex-e2e-")); // the suite's one build of AS_OF, copied
  const db = await DuckDBInstance.create(join(dir, "builds", manifest.buildId, "ballast.duckdb"), {
    access_mode: "READ_ONLY",
  });
  const conn = await db.connect();
  const read = async (q: string) => (await conn.runAndReadAll(q)).getRowObjectsJson() as Record<string, unknown>[];
  matches = Object.fromEntries(
    (await read("select * from pool_coin_matches order by pool_id, token_index")).map((r) => [
      String(r.pool_id),
      r as never,
    ]),
  );
  pools = Object.fromEntries(
    (await read("select * from yield_pools order by pool_id")).map((r) => [String(r.pool_id), r]),
  );
  conn.closeSync();
  served = await serveDir(dir, "ballast_dex");
  ({ app, token } = served);
  const r = await app.request("/api/dex-liquidity", { headers: { "X-API-Key": token } });
  expect(r.status).toBe(200);
  const { _meta, ...payload } = await r.json();
  body = DexLiquiditySchema.parse(payload);
});
afterAll(async () => {
  await served?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const req = (path: string) => app.request(path, { headers: { "X-API-Key": token } });

describe("a build as of 2026-09-03 reads the recorded DefiLlama yields sample", () => {
  it("loads the 104 pools observed at scrapedAt into yield_pools (registry chain ids; empty APYs stay null)", () => {
    expect(manifest.sources.find((s) => s.endpoint === "defillama-yields.pools")).toMatchObject({
      rows: 104,
      dropped: {},
      newestObservedAt: OBSERVED,
    });
    expect(Object.keys(pools)).toHaveLength(104);
    expect(pools["d8c4eff5-c8a9-46fc-a888-057c4c668e72"]).toMatchObject({
      project: "sky-lending",
      chain: "ethereum",
      symbol: "SUSDS",
      apy: 3.52,
      apy_reward: null,
      observed_at: String(OBSERVED),
      underlying_tokens_json: null,
    });
    expect(pools["3637ce7b-529b-49c1-964c-710a50b2939c"]).toMatchObject({ chain: "arbitrum", chain_label: "Arbitrum" });
  });

  it("USDT, USDC and USDS pools map to their registry ids by symbol within the chain", () => {
    const id = (pool: string) => [matches[pool].stablecoin_id, matches[pool].match_method];
    for (const p of [
      "8edfdf02-cdbb-43f7-bca6-954e5fe56813",
      "a5d67f7e-5b51-4a9d-969d-caf051a7f5a4",
      "f981a304-bb6c-45b8-b0c5-fd2f515ad23a",
    ])
      expect(id(p)).toEqual(["usdt-tether", "symbol-chain"]);
    for (const p of [
      "43641cf5-a92e-416b-bce9-27113d3c0db6",
      "d783c8df-e2ed-44b4-8317-161ccc1b5f06",
      "c5c74dd1-995c-4445-9d84-3e710bad7d52",
      "80359eae-ff65-4fa6-842d-c971dc2928de",
    ]) {
      expect(id(p)).toEqual(["usdc-circle", "symbol-chain"]);
    }
    for (const p of [
      "ff1bb959-d160-4906-bad2-d3e37a1e92e8",
      "54e9b138-3146-4c1f-8dce-1cb948f5ef96",
      "0ed981dc-b49d-426d-ade5-6014728b1ef9",
    ])
      expect(id(p)).toEqual(["usds-sky", "symbol-chain"]);
  });

  it("sUSDS is no registry coin: unknown-symbol, never folded into USDS; USDS on Arbitrum is ambiguous with its candidates", () => {
    for (const p of ["d8c4eff5-c8a9-46fc-a888-057c4c668e72", "3637ce7b-529b-49c1-964c-710a50b2939c"]) {
      expect(matches[p]).toMatchObject({ token: "SUSDS", stablecoin_id: null, unmatched_reason: "unknown-symbol" });
    }
    expect(matches["9d499222-a01a-45bb-bbc9-f01c7923693b"]).toMatchObject({
      token: "USDS",
      chain: "arbitrum",
      stablecoin_id: null,
      unmatched_reason: "ambiguous-symbol",
      candidate_ids: "usds-sky,usds-the-standard",
    });
    expect(body.unmatched).toContainEqual(
      expect.objectContaining({
        poolId: "9d499222-a01a-45bb-bbc9-f01c7923693b",
        reason: "ambiguous-symbol",
        candidates: ["usds-sky", "usds-the-standard"],
      }),
    );
  });

  it("scores the covered coins; every other coin carries an explicit unavailable reason; volumes are null, never 0", () => {
    const covered = new Set(Object.values(matches).flatMap((m) => (m.stablecoin_id ? [m.stablecoin_id] : [])));
    expect([...covered].sort()).toEqual(expect.arrayContaining(["usdc-circle", "usds-sky", "usdt-tether"]));
    expect(body.coins.length).toBeGreaterThan(0);
    for (const c of body.coins) {
      if (covered.has(c.stablecoinId)) {
        expect(c.liquidityScore, c.stablecoinId).not.toBeNull();
        expect(c).toMatchObject({
          liquidityScoreUnavailableReason: null,
          activityStatus: "activity-missing",
          totalVolume24hUsd: null,
          totalVolume7dUsd: null,
        });
        expect(c.warning).toMatch(/^activity-missing/);
      } else {
        expect(c).toMatchObject({
          liquidityScore: null,
          liquidityScoreUnavailableReason: "no-retained-pools",
          poolCount: 0,
        });
      }
    }
    const usdt = must(
      body.coins.find((c) => c.stablecoinId === "usdt-tether"),
      "usdt-tether in /api/dex-liquidity",
    );
    expect(usdt).toMatchObject({ poolCount: 3, protocolCount: 3, chainCount: 1 });
    expect(usdt.topPools.map((p) => p.project)).toEqual(["maple", "spark-savings", "aave-v3"]);
    expect(body.quality).toMatchObject({
      poolsTotal: 104,
      stablecoinPools: 47,
      poolsWithAddresses: 0,
      poolsWithVolume: 0,
      observedAt: OBSERVED,
    });
  });

  it("serves both routes (custom / slow cache profiles) and health reports the dex-liquidity cache", async () => {
    const r = await req("/api/dex-liquidity");
    expect(r.headers.get("cache-control")).toBe("public, s-maxage=300, max-age=300");
    const h = await req("/api/dex-liquidity-history?stablecoin=usdt-tether");
    expect(h.status).toBe(200);
    expect(h.headers.get("cache-control")).toBe("public, s-maxage=3600, max-age=300");
    const rows = DexLiquidityHistorySchema.parse(await h.json());
    expect(rows).toEqual([
      expect.objectContaining({
        date: Date.parse("2026-09-02T00:00:00Z") / 1000,
        liquidityScore: must(
          body.coins.find((c) => c.stablecoinId === "usdt-tether"),
          "usdt-tether in /api/dex-liquidity",
        ).liquidityScore,
      }),
    ]);
    expect((await req("/api/dex-liquidity-history?stablecoin=nope-coin")).status).toBe(404);
    const health = await (await app.request("/api/health")).json();
    expect(health.caches["dex-liquidity"]).toMatchObject({ maxAge: 7200 });
    expect(health.caches["dex-liquidity-history"]).toMatchObject({ maxAge: 86400 });
    expect(health.warnings.some((w: string) => w.startsWith("not yet available") && w.includes("dex-liquidity"))).toBe(
      false,
    );
  });
});

describe("yield rankings, history and adapter manifest over the recorded yields sample", () => {
  it("ranks single-asset matched pools by score, rehydrated with the build's safety grades (no card → 40, NR)", async () => {
    const r = await req("/api/yield-rankings");
    expect(r.status).toBe(200);
    const y = await r.json();
    const grades = new Map(
      (await (await app.request("/api/safety-grades")).json()).grades.map(
        (g: { id: string; grade: string; score: number | null }) => [g.id, g],
      ),
    );
    // Candidates: single-token pools matched to a coin (counted here from the published tables).
    const single = Object.entries(matches).filter(
      ([id, m]) => m.stablecoin_id && !String(pools[id]?.symbol).match(/[-/]/) && pools[id]?.apy !== null,
    );
    expect(single.length).toBeGreaterThan(0);
    expect(y.rankings.length).toBe(single.length);
    for (const row of y.rankings) {
      const card = grades.get(row.stablecoinId) as { grade: string; score: number | null } | undefined;
      expect(row.safetyScore).toBe(card?.score ?? 40);
      expect(row.safetyGrade).toBe(card?.score == null ? "NR" : card.grade);
      expect(row.yieldToRisk).toBeCloseTo(row.apy / (101 - row.safetyScore), 4);
      expect(row.sourceKey).toBe(`defillama-yields:${row.id}`);
    }
    for (let i = 1; i < y.rankings.length; i++) {
      const [a, b] = [y.rankings[i - 1], y.rankings[i]];
      expect(
        a.pharosYieldScore > b.pharosYieldScore || (a.pharosYieldScore === b.pharosYieldScore && a.apy >= b.apy),
      ).toBe(true);
    }
    // USD benchmark: TVL-weighted APY of the sample's tokenised T-bill fund pools (a proxy, flagged).
    expect(y.benchmarks.USD).toMatchObject({ isProxy: true, currency: "USD" });
    expect(y.riskFreeRate).toBe(y.benchmarks.USD.rate);
    expect(y.scalingFactor).toBe(8);
    const summary = await (await req("/api/yield-rankings?projection=summary")).json();
    expect(Object.keys(summary.rankings[0]).sort()).toEqual([
      "apy",
      "chain",
      "id",
      "pharosYieldScore",
      "project",
      "safetyGrade",
      "stablecoinId",
      "symbol",
      "tvlUsd",
    ]);
    expect((await req("/api/yield-rankings?projection=bogus")).status).toBe(400);
  });

  it("/api/yield-history: best source per day, one pool by sourceKey, 400/404 on bad input", async () => {
    const best = await (await req("/api/yield-history?stablecoin=usdc-circle")).json();
    expect(best).toHaveLength(1);
    const usdcPools = Object.entries(pools).filter(
      ([id]) => matches[id]?.stablecoin_id === "usdc-circle" && !String(pools[id].symbol).match(/[-/]/),
    );
    const biggest = usdcPools.sort((a, b) => Number(b[1].tvl_usd) - Number(a[1].tvl_usd))[0];
    expect(best[0]).toMatchObject({
      sourceKey: `defillama-yields:${biggest[0]}`,
      date: Date.parse("2026-09-02T00:00:00Z") / 1000,
    });
    const one = await (
      await req(`/api/yield-history?stablecoin=usdc-circle&sourceKey=defillama-yields:${usdcPools[1][0]}`)
    ).json();
    expect(one[0].sourceKey).toBe(`defillama-yields:${usdcPools[1][0]}`);
    expect((await req("/api/yield-history?stablecoin=usdc-circle&mode=source")).status).toBe(400);
    expect((await req("/api/yield-history?stablecoin=usdc-circle&sourceKey=defillama-yields:nope")).status).toBe(404);
    expect((await req("/api/yield-history?stablecoin=zzz-nobody")).status).toBe(404);
    expect(await (await req("/api/yield-history?stablecoin=pyusd-paypal")).json()).toEqual([]);
  });

  it("/api/yield-adapter-manifest counts the capture, its pools and the matched single-asset pools", async () => {
    const m = await (await req("/api/yield-adapter-manifest")).json();
    expect(m.adapters[0]).toMatchObject({
      key: "defillama-yields",
      captures: 1,
      newestCaptureAt: OBSERVED,
      pools: Object.keys(pools).length,
    });
  });
});
