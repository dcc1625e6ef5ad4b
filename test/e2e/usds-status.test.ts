import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type UsdsStatusPayload,
  UsdsStatusPayloadSchema,
  USDS_NO_FREEZE_IMPLEMENTATION,
} from "../../pipelines/sources/usds/usds-status.ts";
import { USDS_STATUS_SAMPLE } from "../../pipelines/sources/usds/source.ts";
import { UsdsStatusSchema } from "../../site-data/usds-status.ts";
import { RECORDED_AS_OF } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";
import { serveRecordedBuildWith } from "../helpers/served-build.ts";

// A `usds.status` capture in the storage root (the file `capture` writes: raw/usds/<day>/<id>.json.gz,
// {endpoint, params, observedAt, payload}; the reader itself is tested against anvil in
// test/onchain/usds-status.test.ts) makes the recorded build as of 2025-09-07 publish
// site-data/usds-status.json and /api/usds-status serve it. Without one the route is 503
// (test/api/app.test.ts). Two captures: the newest at or before as-of wins; one after as-of is ignored.
const OBSERVED = RECORDED_AS_OF - 3600;
const BLOCK_TIME = OBSERVED - 180;

/** The source's declared sample status (no-freeze implementation, reverted probe) at this test's block and supply. */
const payload = (over: Partial<UsdsStatusPayload> = {}): UsdsStatusPayload =>
  UsdsStatusPayloadSchema.parse({
    ...USDS_STATUS_SAMPLE,
    blockNumber: 23_300_000,
    blockTimestamp: BLOCK_TIME,
    totalSupplyRaw: "7912345678901234567890123456",
    ...over,
  });

let built: Awaited<ReturnType<typeof serveRecordedBuildWith>>;

beforeAll(async () => {
  built = await serveRecordedBuildWith("ballast-usds-e2e-", "ballast_usds", async (sink) => {
    const put = async (observedAt: number, p: UsdsStatusPayload) => {
      const key = `raw/usds/${new Date(observedAt * 1000).toISOString().slice(0, 10)}/usds.status-${observedAt}.json.gz`;
      await sink.put(key, gzipSync(JSON.stringify({ endpoint: "usds.status", params: {}, observedAt, payload: p })));
    };
    await put(OBSERVED - 86400, payload({ blockNumber: 23_290_000, blockTimestamp: BLOCK_TIME - 86400 }));
    await put(OBSERVED, payload());
    // observed after as-of: never read by this build (no look-ahead)
    await put(
      RECORDED_AS_OF + 3600,
      payload({
        blockNumber: 23_310_000,
        blockTimestamp: RECORDED_AS_OF + 3000,
        freezeProbe: { ...USDS_STATUS_SAMPLE.freezeProbe, outcome: "answered", result: false, reason: null },
      }),
    );
  });
});
afterAll(async () => {
  await built?.close();
});

describe("a build holding a USDS status capture serves /api/usds-status", () => {
  it("loads the newest capture at or before as-of and publishes the artifact (budget 86400 s)", () => {
    const source = must(
      built.manifest.sources.find((s) => s.endpoint === "usds.status"),
      "the usds.status source in the manifest",
    );
    expect(source).toMatchObject({ status: "ok", rows: 1, dropped: {}, newestObservedAt: OBSERVED });
    expect(built.manifest.files.find((f) => f.path === "site-data/usds-status.json")).toMatchObject({
      artifact: "usds-status",
      rows: 1,
      dataAsOf: BLOCK_TIME,
      maxAgeSec: 86400,
    });
  });

  it("answers the freeze module state, the read block and its source, with `_meta` and the standard profile", async () => {
    expect((await built.app.request("/api/usds-status")).status).toBe(401);
    const r = await built.app.request("/api/usds-status", { headers: { "X-API-Key": built.token } });
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("public, s-maxage=300, max-age=60");
    expect(r.headers.get("x-data-updated-at")).toBe(String(BLOCK_TIME));
    const body = await r.json();
    expect(body._meta).toMatchObject({ updatedAt: BLOCK_TIME, status: "fresh" });
    const { _meta, ...rest } = body;
    const status = UsdsStatusSchema.parse(rest);
    expect(status).toMatchObject({
      stablecoinId: "usds-sky",
      token: {
        chain: "ethereum",
        evmChainId: 1,
        address: "0xdC035D45d973E3EC169d2276DDab16f1e407384F",
        symbol: "USDS",
        decimals: 18,
      },
      freezeModuleActive: false,
      freezeCapabilityPresent: false,
      implementationAddress: USDS_NO_FREEZE_IMPLEMENTATION,
      knownNoFreezeImplementation: true,
      freezeProbe: { function: "isBlocked(address)", selector: "0xfbac3951", outcome: "reverted", result: null },
      totalSupplyRaw: "7912345678901234567890123456",
      readAt: { blockNumber: 23_300_000, blockHash: `0x${"ab".repeat(32)}`, blockTimestamp: BLOCK_TIME },
      source: {
        kind: "evm-rpc",
        rpcEnv: "BALLAST_RPC_ETHEREUM",
        capturePath: `raw/usds/2025-09-06/usds.status-${OBSERVED}.json.gz`,
        observedAt: OBSERVED,
      },
      updatedAt: BLOCK_TIME,
    });
    expect(status.source.calls).toHaveLength(4);
    const file = JSON.parse(
      readFileSync(join(built.dir, "builds", built.manifest.buildId, "site-data/usds-status.json"), "utf8"),
    );
    expect(file).toEqual(rest);
  });

  it("health reports the usds-status cache (budget 86400) and no longer lists it as not yet available", async () => {
    const h = await (await built.app.request("/api/health")).json();
    expect(h.caches["usds-status"]).toMatchObject({ maxAge: 86400, healthy: true });
    expect(h.warnings.some((w: string) => w.startsWith("not yet available") && w.includes("usds-status"))).toBe(false);
  });
});
