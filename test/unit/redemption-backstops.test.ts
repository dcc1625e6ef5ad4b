import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  backstopEntry,
  capacityScore,
  effectiveExitScore,
  interpolate,
  COVERAGE_BREAKPOINTS,
  ABSOLUTE_BREAKPOINTS,
  routeScore,
} from "../../pipelines/analytics/redemption-backstops.ts";
import { loadCuratedCoins, parseCuratedCoins } from "../../pipelines/registry/curated.ts";
import { loadRegistry } from "../../pipelines/registry/registry.ts";
import { type RedemptionFacts, RedemptionFactsSchema } from "../../pipelines/registry/schema.ts";
import { HttpClient, UpstreamError } from "../../pipelines/sources/http-client.ts";
import {
  jsonAttestationAdapter,
  readLiveReserves,
  reserveCompositionEndpoint,
} from "../../pipelines/sources/reserves/reserves.ts";
import { reservesResponse } from "../../site-data/stablecoin-reserves.ts";
import { must } from "../helpers/must.ts";
import { expectUncitedFields } from "../helpers/registry-coin.ts";

/** One value for every redemption fact field, stated here, not read from the schema. */
const FACT_VALUES = {
  routeFamily: "offchain-issuer",
  accessModel: "issuer-api",
  settlementModel: "same-day",
  executionModel: "rules-based-nav",
  outputAssetType: "stable-single",
  capacity: { kind: "heuristic", immediateCapacityUsd: null, immediateCapacityRatio: 0.1, basis: "test" },
  fee: { feeBps: 10, feeModelKind: "fixed-bps", feeDescription: "0.1%" },
  queueEnabled: false,
  minimumRedeemUsd: 100000,
  holderEligibility: "verified-customer",
} satisfies Omit<RedemptionFacts, "sources" | "docs" | "notes">;
type FactField = RedemptionFacts["sources"][number]["fields"][number];
/** The fact fields (every one must be cited), in the order the fixture states them. */
const FIELDS = Object.keys(FACT_VALUES) as FactField[];
const facts = (over: Partial<RedemptionFacts> = {}): RedemptionFacts => ({
  ...FACT_VALUES,
  docs: ["https://tether.to/en/fees/"],
  notes: "",
  sources: [{ fields: [...FIELDS], label: "Tether fees", url: "https://tether.to/en/fees/" }],
  ...over,
});
const curated = loadCuratedCoins();
const curatedText = (id: string, redemption: unknown) =>
  JSON.stringify(curated.map((c) => (c.id === id ? { ...c, redemption } : c)));

describe("redemption facts in the registry", () => {
  it("fails a block missing a field or with a value outside its enum, naming the coin and the field", () => {
    const { holderEligibility: _, ...missing } = facts();
    expect(() => parseCuratedCoins(curatedText("usdt-tether", missing))).toThrow(
      /usdt-tether: redemption\.holderEligibility/,
    );
    expect(() => parseCuratedCoins(curatedText("usdt-tether", { ...facts(), settlementModel: "weekly" }))).toThrow(
      /usdt-tether: redemption\.settlementModel/,
    );
    expect(() =>
      parseCuratedCoins(
        curatedText("usdt-tether", {
          ...facts(),
          capacity: { kind: "heuristic", immediateCapacityUsd: null, basis: "x" },
        }),
      ),
    ).toThrow(/usdt-tether: redemption\.capacity\.immediateCapacityRatio/);
    expect(() =>
      parseCuratedCoins(
        curatedText("usdt-tether", {
          ...facts(),
          fee: { feeBps: null, feeModelKind: "fixed-bps", feeDescription: "x" },
        }),
      ),
    ).toThrow(/usdt-tether: redemption\.fee\.feeBps: fixed-bps needs feeBps/);
  });

  it("fails a fact field no source cites, naming the field", () => {
    const parsed = RedemptionFactsSchema.safeParse(
      facts({ sources: [{ fields: ["routeFamily", "accessModel"], label: "x", url: "https://example.com/" }] }),
    );
    expectUncitedFields(parsed, FIELDS.slice(2));
    expect(() =>
      parseCuratedCoins(
        curatedText(
          "usdt-tether",
          facts({ sources: [{ fields: ["routeFamily"], label: "x", url: "https://example.com/" }] }),
        ),
      ),
    ).toThrow(/usdt-tether: redemption\.sources: no source cites accessModel/);
  });

  it("copies each curated block into the registry (null elsewhere); every curated coin also has risk facts", () => {
    const registry = loadRegistry();
    const withBlock = curated.filter((c) => c.redemption);
    expect(withBlock.length).toBeGreaterThanOrEqual(19);
    for (const c of withBlock) {
      expect(c.risk, c.id).toBeDefined();
      expect(
        must(
          registry.coins.find((r) => r.id === c.id),
          `${c.id} in the registry`,
        ).redemption,
      ).toEqual(c.redemption);
    }
    expect(registry.coins.filter((c) => c.redemption).length).toBe(withBlock.length);
  });

  it("carries the Pharos core extract's reserves with their source", () => {
    const usdt = must(
      loadRegistry().coins.find((c) => c.id === "usdt-tether"),
      "usdt-tether in the registry",
    );
    const reserves = must(usdt.reserves, "usdt-tether's reserves");
    expect(reserves.components[0]).toEqual({ name: "U.S. Treasury bills", pct: 61.230408, risk: "very-low" });
    expect(reserves.source.label).toBe(
      "pharos-core shared/data/stablecoins/coins/usdt-tether.json@00616ae87f491874e1fa1650f6702e5c3f83d945",
    );
    expect(
      must(
        loadRegistry().coins.find((c) => c.id === "usdc-circle"),
        "usdc-circle in the registry",
      ).reserves,
    ).toBeNull();
  });
});

describe("route, capacity and effective exit scores (hand-computed)", () => {
  it("interpolates the coverage and USD breakpoints", () => {
    expect(interpolate(0.03, COVERAGE_BREAKPOINTS)).toBe(30);
    expect(interpolate(0.7, COVERAGE_BREAKPOINTS)).toBe(100);
    expect(interpolate(5e6, ABSOLUTE_BREAKPOINTS)).toBeCloseTo(48.889, 3);
  });

  it("blends coverage 0.6 / absolute 0.4 and applies the constraint multipliers", () => {
    // coverage 30, absolute 49 → round(18 + 19.6) = 38; atomic, any holder: × 1.
    expect(
      capacityScore(0.03, 5e6, {
        settlementModel: "atomic",
        queueEnabled: false,
        minimumRedeemUsd: null,
        holderEligibility: "any",
      }),
    ).toBe(38);
    // 10% and $10M → 60; same-day 0.9 × minimum > $10K 0.9 × verified customer 0.9 = 0.729 → 43.74 → 44.
    expect(capacityScore(0.1, 1e7, facts())).toBe(44);
    // One side stands in for the other; a queue multiplies by 0.9, a minimum over $1M by 0.75.
    expect(
      capacityScore(null, 5e7, {
        settlementModel: "atomic",
        queueEnabled: true,
        minimumRedeemUsd: 2e6,
        holderEligibility: "any",
      }),
    ).toBe(Math.round(80 * 0.9 * 0.75));
    expect(capacityScore(null, null, facts())).toBeNull();
  });

  it("weights the route components and caps by family", () => {
    const lusd = facts({
      routeFamily: "collateral-redeem",
      accessModel: "permissionless-onchain",
      settlementModel: "atomic",
      executionModel: "deterministic-onchain",
      outputAssetType: "bluechip-collateral",
      fee: { feeBps: 50, feeModelKind: "formula", feeDescription: "0.5% floor" },
    });
    // 0.2×100 + 0.15×100 + 0.15×100 + 0.25×90 + 0.15×65 + 0.1×50 = 87.25 → 87.
    expect(routeScore(lusd, 90)).toEqual({ score: 87, capsApplied: [] });
    // issuer-api 40, immediate 90, NAV rules 60, capacity 64, stable 100, fee 0 → 71.5 → capped at 65.
    expect(
      routeScore(
        facts({ settlementModel: "immediate", fee: { feeBps: 0, feeModelKind: "fixed-bps", feeDescription: "none" } }),
        64,
      ),
    ).toEqual({ score: 65, capsApplied: ["offchain-route-cap"] });
    // An unknown fee costs 50: 8 + 9.75 + 9 + 13.75 + 15 + 5 = 60.5 → 61 (under the cap).
    expect(
      routeScore(facts({ fee: { feeBps: null, feeModelKind: "undisclosed-reviewed", feeDescription: "?" } }), 55).score,
    ).toBe(61);
    const queue = facts({
      routeFamily: "queue-redeem",
      accessModel: "permissionless-onchain",
      settlementModel: "atomic",
      executionModel: "deterministic-onchain",
      fee: { feeBps: 0, feeModelKind: "fixed-bps", feeDescription: "none" },
    });
    expect(routeScore(queue, 100)).toEqual({ score: 70, capsApplied: ["queue-route-cap"] });
    expect(routeScore(queue, null)).toEqual({ score: null, capsApplied: [] });
  });

  it("effective exit: capacity and confidence factors, the issuer-rail bonus, one side alone", () => {
    // exit size min(max(5% × $1B, $100K), $25M) = $25M; $100M covers it → R = round(65 × 1 × 0.75) = 49.
    const o = { immediateCapacityUsd: 1e8, supplyUsd: 1e9, confidence: "medium" as const, independentIssuerRail: true };
    expect(effectiveExitScore(null, 65, o)).toBe(49);
    expect(effectiveExitScore(80, 65, o)).toBe(85); // 80 + 0.1 × 49 = 84.9
    expect(effectiveExitScore(80, 65, { ...o, independentIssuerRail: false })).toBe(80);
    expect(effectiveExitScore(null, 65, { ...o, immediateCapacityUsd: 5e6 })).toBe(10); // 65 × 0.2 × 0.75 = 9.75
    expect(effectiveExitScore(72, null, o)).toBe(72);
    expect(effectiveExitScore(null, null, o)).toBeNull();
  });

  it("builds an entry; a severe open below-peg depeg impairs it (failed, low, no score)", () => {
    const e = backstopEntry("usdt-tether", facts(), {
      supplyUsd: 1e11,
      openBelowPegBps: null,
      dexLiquidityScore: null,
      asOf: 1757203200,
    });
    // capacity: 10% → 60, $10B → 100 → 76 × 0.729 = 55.4 → 55; route 8 + 9.75 + 9 + 13.75 + 15 + 9 = 64.5 → 65.
    expect([
      e.capacityScore,
      e.score,
      e.effectiveExitScore,
      e.resolutionState,
      e.modelConfidence,
      e.feeConfidence,
      e.immediateCapacityUsd,
    ]).toEqual([55, 65, 49, "resolved", "medium", "fixed", 1e10]);
    expect(e.sourceMode).toBe("static");
    const hit = backstopEntry("usdt-tether", facts(), {
      supplyUsd: 1e11,
      openBelowPegBps: 2500,
      dexLiquidityScore: null,
      asOf: 1757203200,
    });
    expect([hit.score, hit.effectiveExitScore, hit.resolutionState, hit.modelConfidence]).toEqual([
      null,
      null,
      "failed",
      "low",
    ]);
    expect(hit.impairedReason).toMatch(/2500 bps/);
    expect(
      backstopEntry("usdt-tether", facts(), {
        supplyUsd: 1e11,
        openBelowPegBps: 2499,
        dexLiquidityScore: null,
        asOf: 0,
      }).resolutionState,
    ).toBe("resolved");
    const none = backstopEntry(
      "x-y",
      facts({
        capacity: { kind: "heuristic", immediateCapacityUsd: null, immediateCapacityRatio: null, basis: "unknown" },
      }),
      { supplyUsd: 1e9, openBelowPegBps: null, dexLiquidityScore: null, asOf: 0 },
    );
    expect([none.score, none.resolutionState]).toEqual([null, "missing-capacity"]);
    expect(
      backstopEntry("x-y", facts(), { supplyUsd: null, openBelowPegBps: null, dexLiquidityScore: null, asOf: 0 })
        .resolutionState,
    ).toBe("missing-cache");
  });
});

describe("live reserves adapter (json-attestation) against a local server", () => {
  const fixture = JSON.parse(
    readFileSync(join(import.meta.dirname, "../fixtures/reserves/attestation.json"), "utf8"),
  ) as Record<string, unknown>;
  let url = "";
  const server = createServer((req, res) => {
    const key = /^\/reserves\/([a-z-]+)\.json$/.exec(req.url ?? "")?.[1];
    if (!key || !(key in fixture) || key.startsWith("_")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end("{}");
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(fixture[key]));
  });
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  const client = () => new HttpClient({ name: "reserves", baseUrl: url, retries: 0, backoffMs: 5, timeoutMs: 2000 });

  it("reads and normalises a report; the endpoint turns it into component rows", async () => {
    const reading = await readLiveReserves(jsonAttestationAdapter("usdt-tether", "reserves/good.json", 3600), client());
    expect(reading).toEqual({
      stablecoinId: "usdt-tether",
      adapter: "json-attestation",
      reportedAt: 1757030400,
      totalUsd: 1000,
      components: [
        { name: "U.S. Treasury bills", valueUsd: 750, pct: 75 },
        { name: "Cash and bank deposits", valueUsd: 250, pct: 25 },
      ],
    });
    const rows = reserveCompositionEndpoint.toRows(
      { ...reading, maxAgeSec: 3600 },
      {
        endpoint: "reserves.composition",
        params: { stablecoinId: "usdt-tether" },
        observedAt: 1757200000,
        origin: "live",
        path: "x",
        sha256: "x",
        payload: null,
      },
    );
    expect(rows.rows.map((r) => [r.name, r.pct, r.max_age_sec, r.observed_at])).toEqual([
      ["U.S. Treasury bills", 75, 3600, 1757200000],
      ["Cash and bank deposits", 25, 3600, 1757200000],
    ]);
  });

  it("rejects an unreadable report whole, and a failed call", async () => {
    await expect(
      readLiveReserves(jsonAttestationAdapter("usdt-tether", "reserves/empty-total.json"), client()),
    ).rejects.toThrow(/totals 0 USD/);
    await expect(
      readLiveReserves(jsonAttestationAdapter("usdt-tether", "reserves/no-date.json"), client()),
    ).rejects.toThrow(UpstreamError);
    await expect(
      readLiveReserves(jsonAttestationAdapter("usdt-tether", "reserves/missing.json"), client()),
    ).rejects.toThrow();
  });

  it("serves live within the budget, live-stale after it, fallback without a reading", () => {
    const live = {
      adapter: "json-attestation",
      reportedAt: 1757030400,
      observedAt: 1757200000,
      maxAgeSec: 3600,
      totalUsd: 1000,
      components: [{ name: "Cash", pct: 100, valueUsd: 1000 }],
    };
    const fallback = must(
      must(
        loadRegistry().coins.find((c) => c.id === "usdt-tether"),
        "usdt-tether in the registry",
      ).reserves,
      "usdt-tether's reserves",
    );
    expect(reservesResponse("usdt-tether", { live, fallback }, 1757200000 + 3600, 0).mode).toBe("live");
    const stale = reservesResponse("usdt-tether", { live, fallback }, 1757200000 + 3601, 0);
    expect([stale.mode, stale.ageSeconds, stale.components[0].risk]).toEqual(["live-stale", 3601, null]);
    const fb = reservesResponse("usdt-tether", { live: null, fallback }, 0, 0);
    expect([fb.mode, fb.components.length, fb.source.kind, fb.components[0].valueUsd]).toEqual([
      "fallback",
      11,
      "curated",
      null,
    ]);
  });
});
