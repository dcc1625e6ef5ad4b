import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildFingerprint, recordBuildInputs, unchangedBuild } from "../../build/fingerprint.ts";

// `build --if-changed` (make run): a build is skipped only when the serving build came from the same inputs and code.
const root = mkdtempSync(join(tmpdir(), "ballast-fingerprint-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const captureDir = join(root, "captures");
const dataDir = join(root, "data");
mkdirSync(captureDir);
mkdirSync(join(dataDir, "builds", "b1"), { recursive: true });
writeFileSync(join(captureDir, "prices.csv"), "day,price\n");
const inputs = { asOf: 1_757_203_200, captureDir, dataDir, onchainLedgerPath: join(dataDir, "onchain.duckdb") };

describe("build fingerprint", () => {
  it("is stable for the same inputs and moves with a capture, the as-of, a live capture or the ledger", () => {
    const base = buildFingerprint(inputs);
    expect(buildFingerprint(inputs)).toBe(base);
    expect(buildFingerprint({ ...inputs, asOf: inputs.asOf + 86400 })).not.toBe(base);
    utimesSync(join(captureDir, "prices.csv"), new Date(), new Date(Date.now() + 5000));
    const touched = buildFingerprint(inputs);
    expect(touched).not.toBe(base);
    mkdirSync(join(dataDir, "raw", "defillama"), { recursive: true });
    writeFileSync(join(dataDir, "raw", "defillama", "list.json"), "{}");
    expect(buildFingerprint(inputs)).not.toBe(touched);
  });

  it("names the serving build only while the pointer still points at the build recorded with that fingerprint", () => {
    const fp = buildFingerprint(inputs);
    expect(unchangedBuild(dataDir, fp)).toBeNull(); // never recorded
    writeFileSync(join(dataDir, "builds", "b1", "manifest.json"), "{}");
    writeFileSync(
      join(dataDir, "latest.json"),
      JSON.stringify({ buildId: "b1", asOf: inputs.asOf, manifest: "builds/b1/manifest.json" }),
    );
    recordBuildInputs(dataDir, fp, "b1");
    expect(unchangedBuild(dataDir, fp)).toBe("b1");
    expect(unchangedBuild(dataDir, "0".repeat(64))).toBeNull(); // inputs changed
    writeFileSync(
      join(dataDir, "latest.json"),
      JSON.stringify({ buildId: "b2", asOf: inputs.asOf, manifest: "builds/b2/manifest.json" }),
    );
    expect(unchangedBuild(dataDir, fp)).toBeNull(); // another build serves (a restore, a scheduled build)
  });
});
