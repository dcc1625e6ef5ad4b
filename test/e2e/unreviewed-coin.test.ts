import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { Db } from "../../build/duckdb.ts";
import { runBuild } from "../../build/run-build.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { CAPTURE_DIR, RECORDED_AS_OF } from "../helpers/build-once.ts";

const LIST_DIR = "zacheryglass-stablecoinwatch";
const LIST_FILE = "defillama_raw_output.json";
/** A new, well-formed upstream coin no registry record knows. */
const NEW_ASSET = {
  id: "99999",
  name: "Brand New Dollar",
  symbol: "BND",
  gecko_id: null,
  pegType: "peggedUSD",
  priceSource: "defillama",
  pegMechanism: "fiat-backed",
  circulating: { peggedUSD: 12_345_678 },
  circulatingPrevDay: { peggedUSD: 12_000_000 },
  circulatingPrevWeek: { peggedUSD: 11_000_000 },
  circulatingPrevMonth: { peggedUSD: 10_000_000 },
  chainCirculating: { Ethereum: { current: { peggedUSD: 12_345_678 }, circulatingPrevDay: { peggedUSD: 12_000_000 } } },
  chains: ["Ethereum"],
  price: 1.0002,
};

let manifest: BuildManifest;
let buildDir: string;
beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  // The recorded capture dir with the DefiLlama list edited to carry one extra asset.
  const captureDir = mkdtempSync(join(tmpdir(), "ballast-capture-"));
  for (const entry of readdirSync(CAPTURE_DIR))
    if (entry !== LIST_DIR) symlinkSync(join(CAPTURE_DIR, entry), join(captureDir, entry));
  mkdirSync(join(captureDir, LIST_DIR));
  for (const entry of readdirSync(join(CAPTURE_DIR, LIST_DIR))) {
    if (entry !== LIST_FILE) symlinkSync(join(CAPTURE_DIR, LIST_DIR, entry), join(captureDir, LIST_DIR, entry));
  }
  const list = JSON.parse(readFileSync(join(CAPTURE_DIR, LIST_DIR, LIST_FILE), "utf8"));
  list.peggedAssets.push(NEW_ASSET);
  writeFileSync(join(captureDir, LIST_DIR, LIST_FILE), JSON.stringify(list));
  const dir = mkdtempSync(join(tmpdir(), "ballast-unreviewed-"));
  ({ manifest } = await runBuild({ asOf: RECORDED_AS_OF, captureDir, sink: new FsSink(dir), warehousePath: null }));
  buildDir = join(dir, "builds", manifest.buildId);
});

describe("an unknown upstream coin never blocks publication", () => {
  it("publishes the build and warns in the manifest", () => {
    expect(manifest.warnings.filter((w) => /unreviewed/.test(w))).toEqual([
      expect.stringMatching(/bnd-unreviewed-99999.*99999/),
    ]);
  });

  it("lists the coin as unreviewed with its supply", () => {
    const list = JSON.parse(readFileSync(join(buildDir, "site-data/stablecoins.json"), "utf8"));
    const coin = list.peggedAssets.find((a: { symbol: string }) => a.symbol === "BND");
    expect(coin).toMatchObject({
      id: "bnd-unreviewed-99999",
      unreviewed: true,
      pegType: "peggedUSD",
      supplySource: "defillama",
    });
    expect(coin.circulating.peggedUSD).toBe(12_345_678);
    expect(coin.chainCirculating.Ethereum.current).toBe(12_345_678);
    // reviewed coins carry no such field
    expect(list.peggedAssets.find((a: { id: string }) => a.id === "usdt-tether").unreviewed).toBeUndefined();
    const detail = JSON.parse(readFileSync(join(buildDir, "site-data/stablecoin/bnd-unreviewed-99999.json"), "utf8"));
    expect(detail.tokens.length).toBeGreaterThan(0);
  });

  it("keeps the flag in the published DuckDB", async () => {
    const db = await Db.open(join(buildDir, "ballast.duckdb"), { access_mode: "READ_ONLY" });
    try {
      const rows = await db.all("select id, issuer, unreviewed from registry_coins where llama_id = '99999'");
      expect(rows).toEqual([{ id: "bnd-unreviewed-99999", issuer: "unreviewed", unreviewed: true }]);
    } finally {
      db.close();
    }
  });
});
