import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import { CACHE_PROFILES } from "../../api/lib/freshness.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { COMPONENT_WEIGHTS } from "../../pipelines/analytics/redemption-backstops.version.ts";
import { loadCuratedCoins } from "../../pipelines/registry/curated.ts";
import {
  RedemptionBackstopEntrySchema,
  RedemptionBackstopsPayloadSchema,
} from "../../site-data/redemption-backstops.ts";
import { StablecoinReservesResponseSchema } from "../../site-data/stablecoin-reserves.ts";
import { serveRecordedBuild } from "../helpers/served-build.ts";

let served: Awaited<ReturnType<typeof serveRecordedBuild>>;
const tmp: string[] = [];
beforeAll(async () => {
  served = await serveRecordedBuild("ballast-redemption-", "ballast_redemption");
});
afterAll(async () => {
  await served?.close();
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

/** The served build copied with its redemption-backstops file replaced by `body`, served by a fresh app (same key store). */
async function withBackstopsFile(body: string) {
  const dir = mkdtempSync(join(tmpdir(), "ballast-redemption-copy-"));
  tmp.push(dir);
  cpSync(served.dir, dir, { recursive: true });
  const site = join(dir, "builds", served.manifest.buildId, "site-data");
  writeFileSync(join(site, "redemption-backstops.json"), body);
  for (const ext of [".br", ".gz"]) rmSync(join(site, `redemption-backstops.json${ext}`), { force: true });
  return createApp({
    store: new PublishedStore(fsReader(dir), 0),
    keys: served.keys,
    limiter: new KeyRateLimiter(),
    corsOrigins: [],
    clockMode: "auto",
  });
}

describe("/api/redemption-backstops on the recorded build", () => {
  it("returns every spec 2.12 field for each curated coin, with the methodology", async () => {
    const res = await served.get<{ coins: Record<string, Record<string, unknown>> }>("/api/redemption-backstops");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe(CACHE_PROFILES.standard);
    const body = RedemptionBackstopsPayloadSchema.parse(res.body);
    const curated = loadCuratedCoins()
      .filter((c) => c.redemption)
      .map((c) => c.id);
    expect(Object.keys(body.coins).sort()).toEqual(curated.sort());
    const SPEC_FIELDS = [
      "stablecoinId",
      "score",
      "effectiveExitScore",
      "dexLiquidityScore",
      "routeFamily",
      "accessModel",
      "settlementModel",
      "outputAssetType",
      "sourceMode",
      "resolutionState",
      "capacityConfidence",
      "capacityBasis",
      "capacitySemantics",
      "feeConfidence",
      "feeModelKind",
      "modelConfidence",
      "immediateCapacityUsd",
      "immediateCapacityRatio",
      "feeBps",
      "feeDescription",
      "queueEnabled",
      "docs",
      "notes",
      "capsApplied",
      "updatedAt",
      "methodologyVersion",
    ];
    for (const [id, e] of Object.entries(res.body.coins)) {
      for (const f of SPEC_FIELDS) expect(Object.hasOwn(e, f), `${id}.${f}`).toBe(true);
      RedemptionBackstopEntrySchema.parse(e);
      expect(e.stablecoinId).toBe(id);
      expect(e.sourceMode).toBe("static");
      expect(e.dexLiquidityScore).toBeNull();
    }
    // the weights the model scores with (their values are checked by a scored example in
    // test/unit/redemption-backstops.test.ts), published as they are
    expect(body.methodology.componentWeights).toEqual(COMPONENT_WEIGHTS);
    expect(body.methodology.routeFamilyCaps).toEqual({
      "queue-redeem": { max: 70, cap: "queue-route-cap" },
      "offchain-issuer": { max: 65, cap: "offchain-route-cap" },
    });
    // Hand-checked on the recorded build: LUSD's documented bound and the Liquity fee floor.
    expect([
      body.coins["lusd-liquity"].score,
      body.coins["lusd-liquity"].modelConfidence,
      body.coins["lusd-liquity"].capacityConfidence,
    ]).toEqual([87, "high", "documented-bound"]);
    expect(body.coins["usdt-tether"].score).toBeLessThanOrEqual(65);
    expect(body.coins["buidl-blackrock"].resolutionState).toBe("missing-capacity");
    const changelog = await served.app.request(body.methodology.changelogPath);
    expect(await changelog.text()).toContain(body.methodology.version);
  });
});

describe("/api/stablecoin-reserves/{stablecoinId} on the recorded build", () => {
  it("serves USDT's curated composition as fallback with the reserve-fallback profile", async () => {
    const res = await served.get("/api/stablecoin-reserves/usdt-tether");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe(CACHE_PROFILES["reserve-fallback"]);
    const body = StablecoinReservesResponseSchema.parse(res.body);
    expect([body.mode, body.source.kind, body.components.length]).toEqual(["fallback", "curated", 11]);
    expect(body.components.find((c) => c.name === "Secured loans")).toEqual({
      name: "Secured loans",
      pct: 7.165724,
      risk: "high",
      valueUsd: null,
    });
    expect(body.source.url).toMatch(/^https:\/\/github\.com\/TokenBrice\/pharos-watch\/blob\/00616ae8/);
  });

  it("404 for an unknown id; 503 for a known coin without reserve data (never invented)", async () => {
    expect((await served.get("/api/stablecoin-reserves/not-a-coin")).status).toBe(404);
    const usdc = await served.get("/api/stablecoin-reserves/usdc-circle");
    expect([usdc.status, usdc.body, usdc.headers.get("retry-after")]).toEqual([
      503,
      { error: "Data not yet available: stablecoin-reserves" },
      "60",
    ]);
  });
});

describe("/api/redemption-backstops 503s", () => {
  it("Data not yet available without rows; Redemption backstop snapshot unavailable when unreadable", async () => {
    const req = async (app: ReturnType<typeof createApp>) => {
      const r = await app.request("/api/redemption-backstops", { headers: { "X-API-Key": served.token } });
      return [r.status, await r.json()];
    };
    const empty = await withBackstopsFile(
      JSON.stringify({
        coins: {},
        methodology: RedemptionBackstopsPayloadSchema.shape.methodology.parse(
          (await served.get<{ methodology: unknown }>("/api/redemption-backstops")).body.methodology,
        ),
        updatedAt: 1,
      }),
    );
    expect(await req(empty)).toEqual([503, { error: "Data not yet available" }]);
    const corrupt = await withBackstopsFile('{"coins": 5}');
    expect(await req(corrupt)).toEqual([503, { error: "Redemption backstop snapshot unavailable" }]);
  });
});
