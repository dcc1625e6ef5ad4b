import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildHealth } from "../../api/health.ts";
import { Db } from "../../build/duckdb.ts";
import { runBuild } from "../../build/run-build.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import { type BuildManifest, RunRecordSchema } from "../../site-data/manifest.ts";
import type { StablecoinData } from "../../site-data/stablecoins.ts";
import { CAPTURE_DIR, RECORDED_AS_OF } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";

// Issue 17 "Bad input": each corruption of a copy of ../shared/data and what the build must do with it.
const LIST = "zacheryglass-stablecoinwatch/defillama_raw_output.json";
const MARKETS = "zacheryglass-stablecoinwatch/coingecko_raw_output.json";
const MARKET_CAP_CSV = "partrita-stablecoin-tracker/stablecoin_marketcap.csv";
const ECB = "ecb-eurofxref/eurofxref-hist.csv";
const USDC_LLAMA_ID = "2";
/** An unknown upstream coin whose chains sum to 3x its total. */
const BAD_NEW_ASSET = {
  id: "99998",
  name: "Lopsided Dollar",
  symbol: "LSD",
  gecko_id: null,
  pegType: "peggedUSD",
  priceSource: "defillama",
  pegMechanism: "fiat-backed",
  circulating: { peggedUSD: 10_000_000 },
  circulatingPrevDay: { peggedUSD: 10_000_000 },
  chainCirculating: {
    Ethereum: { current: { peggedUSD: 20_000_000 }, circulatingPrevDay: { peggedUSD: 19_000_000 } },
    Tron: { current: { peggedUSD: 10_000_000 } },
  },
  chains: ["Ethereum", "Tron"],
  price: 1,
};

/** The fields of an upstream DefiLlama list entry (../shared/data) this file reads and edits. */
interface LlamaAsset {
  id: string;
  symbol: string;
  circulating: { peggedUSD: number };
  chainCirculating: Record<string, { current: { peggedUSD: number }; circulatingPrevDay?: { peggedUSD: number } }>;
}

/**
 * A fresh capture dir that links every recorded file of ../shared/data except those in `edits`, which
 * are written (as new files, never through a link) with the text each edit returns from the original.
 */
function corruptedCaptureDir(edits: Record<string, (text: string) => string>): string {
  const root = mkdtempSync(join(tmpdir(), "ballast-bad-input-"));
  const link = (rel: string) => {
    const src = join(CAPTURE_DIR, rel);
    const touched = Object.keys(edits).filter((f) => f === rel || f.startsWith(`${rel}/`));
    if (touched.length === 0) {
      symlinkSync(src, join(root, rel));
      return;
    }
    if (touched.includes(rel)) {
      writeFileSync(join(root, rel), edits[rel](readFileSync(src, "utf8")));
      return;
    }
    mkdirSync(join(root, rel));
    for (const e of readdirSync(src)) link(join(rel, e));
  };
  for (const e of readdirSync(CAPTURE_DIR)) link(e);
  return root;
}

const editList = (text: string) => {
  const list = JSON.parse(text);
  const assets = list.peggedAssets as LlamaAsset[];
  const usdc = must(
    assets.find((a) => a.id === USDC_LLAMA_ID),
    "USDC in the recorded list",
  );
  usdc.circulating.peggedUSD *= 0.9; // the total loses 10%; its chains do not
  const tusd = must(
    assets.find((a) => a.symbol === "TUSD"),
    "TUSD in the recorded list",
  );
  const lusd = must(
    assets.find((a) => a.symbol === "LUSD"),
    "LUSD in the recorded list",
  );
  assets.push(structuredClone(lusd)); // identical repeat
  assets.push({ ...structuredClone(tusd), circulating: { peggedUSD: tusd.circulating.peggedUSD * 3 } }); // conflicting repeat
  assets.push(BAD_NEW_ASSET);
  return JSON.stringify(list);
};
const original = JSON.parse(readFileSync(join(CAPTURE_DIR, LIST), "utf8")).peggedAssets as LlamaAsset[];
/** USDC's entry in the recorded (unedited) list. */
const originalUsdc = () =>
  must(
    original.find((a) => a.id === USDC_LLAMA_ID),
    "USDC in the recorded list",
  );

/** The corrupted inputs of the shared build: the list edited, two optional captures emptied. */
const EDITS: Record<string, (text: string) => string> = {
  [LIST]: editList,
  [MARKET_CAP_CSV]: () => "",
  [MARKETS]: () => "\n",
};

let sinkDir: string;
let manifest: BuildManifest;
let runKey: string;
let coins: StablecoinData[];
beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  const captureDir = corruptedCaptureDir(EDITS);
  sinkDir = mkdtempSync(join(tmpdir(), "ballast-bad-input-sink-"));
  ({ manifest, runKey } = await runBuild({
    asOf: RECORDED_AS_OF,
    captureDir,
    sink: new FsSink(sinkDir),
    warehousePath: null,
  }));
  coins = JSON.parse(
    readFileSync(join(sinkDir, "builds", manifest.buildId, "site-data/stablecoins.json"), "utf8"),
  ).peggedAssets;
});

describe("a coin whose chains disagree with its total is quarantined, the rest publishes", () => {
  it("USDC (total x 0.9) is published with supplyChainGuard quarantined, its total as the upstream says, no chain rows", () => {
    const usdc = must(
      coins.find((c) => c.id === "usdc-circle"),
      "usdc-circle in stablecoins.json",
    );
    const listTotal = originalUsdc().circulating.peggedUSD * 0.9;
    expect(usdc.circulating.peggedUSD).toBeCloseTo(listTotal, -3);
    expect(usdc.chainCirculating).toEqual({});
    expect(usdc.supplyChainGuard).toMatchObject({
      reason: "supply-chain-dropout",
      status: "quarantined",
      quarantinedSince: RECORDED_AS_OF,
    });
    const guard = must(usdc.supplyChainGuard, "USDC's supplyChainGuard");
    const eth = must(
      guard.chains.find((c) => c.chainLabel === "Ethereum"),
      "USDC's Ethereum row in its supplyChainGuard",
    );
    const upstreamEth = originalUsdc().chainCirculating.Ethereum;
    expect(eth).toMatchObject({
      chainId: "ethereum",
      resolution: "unavailable",
      baselineSource: "list-prev-day",
      observedAtKind: "upstream",
    });
    expect(eth.listCurrentUsd).toBeCloseTo(upstreamEth.current.peggedUSD, -3);
    expect(eth.baselineUsd).toBeCloseTo(
      must(upstreamEth.circulatingPrevDay, "USDC's upstream Ethereum circulatingPrevDay").peggedUSD,
      -3,
    );
    expect(guard.chains.length).toBeGreaterThan(50);
  });

  it("an unreviewed coin whose chains sum to 3x its total is quarantined too", () => {
    const lsd = must(
      coins.find((c) => c.symbol === "LSD"),
      "LSD in stablecoins.json",
    );
    expect(lsd.unreviewed).toBe(true);
    expect(lsd.supplyChainGuard?.status).toBe("quarantined");
    expect(
      must(lsd.supplyChainGuard, "LSD's supplyChainGuard")
        .chains.map((c) => c.listCurrentUsd)
        .sort(),
    ).toEqual([10_000_000, 20_000_000]);
  });

  it("every other coin keeps its chains; the chain tables hold none of the quarantined coins", async () => {
    const usdt = must(
      coins.find((c) => c.id === "usdt-tether"),
      "usdt-tether in stablecoins.json",
    );
    expect(usdt.supplyChainGuard).toBeUndefined();
    expect(Object.keys(usdt.chainCirculating).length).toBeGreaterThan(10);
    expect(
      coins
        .filter((c) => c.supplyChainGuard)
        .map((c) => c.symbol)
        .sort(),
    ).toEqual(["LSD", "USDC"]);
    const db = await Db.open(join(sinkDir, "builds", manifest.buildId, "ballast.duckdb"), { access_mode: "READ_ONLY" });
    try {
      const rows = await db.all<{ id: string; n: number }>(
        "select stablecoin_id as id, count(*)::integer as n from stablecoin_chain_supply where stablecoin_id in (select stablecoin_id from supply_chain_guard) group by all",
      );
      expect(rows).toEqual([]);
      const guard = await db.all<{ stablecoin_id: string }>(
        "select stablecoin_id from supply_chain_guard order by stablecoin_id",
      );
      expect(guard.map((g) => g.stablecoin_id)).toContain("usdc-circle");
    } finally {
      db.close();
    }
  });

  it("the manifest counts the withheld chain rows and names the coins", () => {
    const usdcChains = Object.keys(originalUsdc().chainCirculating).length;
    expect(manifest.qualityRejections.supply_chain_guard["chain-sum-above-total"]).toBeGreaterThanOrEqual(
      usdcChains - 5,
    );
    expect(manifest.warnings.some((w) => w.startsWith("supply-chain guard: usdc-circle quarantined"))).toBe(true);
  });
});

describe("empty captures are named in the manifest and in health", () => {
  it("an emptied optional CSV and JSON capture are skipped and listed with their reason", () => {
    expect(manifest.skippedCaptures).toEqual([
      { file: MARKETS, endpoint: "coingecko.markets", reason: "empty-file" },
      { file: MARKET_CAP_CSV, endpoint: "coingecko.market_chart", reason: "empty-file" },
    ]);
    const captured = manifest.sources.flatMap((s) => s.captures.map((c) => c.path));
    expect(captured).not.toContain(MARKET_CAP_CSV);
  });

  it("health names both files in a status-setting warning (the default as-of is already stale from the ECB rates)", () => {
    const h = buildHealth({ manifest }, RECORDED_AS_OF + 60, "replay");
    expect(h.status).not.toBe("healthy");
    const w = h.warnings.find((x) => x.startsWith("recorded captures empty and skipped (sets status degraded"));
    expect(w).toContain(MARKET_CAP_CSV);
    expect(w).toContain(MARKETS);
  });

  it("an emptied required capture fails the build like a missing one, naming the file; the previous build keeps serving", async () => {
    const sink = new FsSink(sinkDir);
    const before = readFileSync(join(sinkDir, "latest.json"), "utf8");
    const empty = corruptedCaptureDir({ [LIST]: () => "" });
    await expect(runBuild({ asOf: RECORDED_AS_OF, captureDir: empty, sink, warehousePath: null })).rejects.toThrow(
      `recorded capture ${LIST} (defillama.stablecoins) is empty (empty-file)`,
    );
    expect(readFileSync(join(sinkDir, "latest.json"), "utf8")).toBe(before);
    const failed = (await sink.list("runs/")).filter((k) => k.endsWith("-failed.json"));
    expect(failed).toHaveLength(1);
    const failedBytes = must(await sink.get(failed[0]), `the stored ${failed[0]}`);
    const record = RunRecordSchema.parse(JSON.parse(Buffer.from(failedBytes).toString("utf8")));
    expect(record).toMatchObject({ status: "failed", buildId: null, manifest: null });
    expect(record.error).toContain(LIST);
  });
});

describe("duplicate upstream coins are counted", () => {
  it("an identical repeat and a conflicting repeat are dropped by name; the conflict is a warning; the first entry wins", () => {
    const list = must(
      manifest.sources.find((s) => s.endpoint === "defillama.stablecoins"),
      "the defillama.stablecoins source in the manifest",
    );
    expect(list.dropped["duplicate-identical"]).toBe(1);
    expect(list.dropped["duplicate-conflicting"]).toBe(1);
    expect(
      manifest.warnings.some((w) =>
        w.startsWith(
          "source defillama.stablecoins: 1 repeated upstream entry with the id of an earlier entry but other values",
        ),
      ),
    ).toBe(true);
    const tusd = must(
      coins.find((c) => c.symbol === "TUSD"),
      "TUSD in stablecoins.json",
    );
    const upstreamTusd = must(
      original.find((a) => a.symbol === "TUSD"),
      "TUSD in the recorded list",
    );
    expect(tusd.circulating.peggedUSD).toBeCloseTo(upstreamTusd.circulating.peggedUSD, 0);
    expect(coins.filter((c) => c.symbol === "LUSD")).toHaveLength(1);
  });
});

describe("every run is recorded, also when the build is reused", () => {
  it("a new dropped row gives a new build whose manifest counts it; an identical rerun reuses the build and says nothing differs", async () => {
    const first = RunRecordSchema.parse(JSON.parse(readFileSync(join(sinkDir, runKey), "utf8")));
    expect(first).toMatchObject({ status: "published", buildId: manifest.buildId, differsFromPublished: [] });
    // The same inputs plus one malformed row appended to the ECB history: dropped by its reader. The
    // input digest in each CSV's provenance line changes, so this is a new build that records the drop.
    const withBadRow = corruptedCaptureDir({ ...EDITS, [ECB]: (t) => `${t}1998-13-45,not-a-rate\n` });
    const again = await runBuild({
      asOf: RECORDED_AS_OF,
      captureDir: withBadRow,
      sink: new FsSink(sinkDir),
      warehousePath: null,
    });
    expect(again.reused).toBe(false);
    expect(again.manifest.buildId).not.toBe(manifest.buildId);
    const drops = (m: BuildManifest) => Object.values(m.readerDropped[ECB] ?? {}).reduce((a, b) => a + b, 0);
    expect(drops(again.manifest)).toBe(drops(manifest) + 1);
    // Rerun on identical inputs: the complete build is reused as it is, and the run record says so.
    const rerun = await runBuild({
      asOf: RECORDED_AS_OF,
      captureDir: withBadRow,
      sink: new FsSink(sinkDir),
      warehousePath: null,
    });
    expect(rerun.reused).toBe(true);
    const record = RunRecordSchema.parse(JSON.parse(readFileSync(join(sinkDir, rerun.runKey), "utf8")));
    expect(record).toMatchObject({ status: "reused", buildId: again.manifest.buildId, differsFromPublished: [] });
    expect(drops(must(record.manifest, "the reused run's manifest"))).toBe(drops(manifest) + 1);
    expect(readdirSync(join(sinkDir, "runs")).filter((f) => f.endsWith(".json"))).toHaveLength(4); // published, failed, published, reused
  });
});
