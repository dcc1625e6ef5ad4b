import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onchainCliRunner } from "../helpers/onchain-cli.ts";
import { LedgerStore } from "../../pipelines/onchain/ledger-store.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";

// Expected counts come from the recorded CSVs themselves (papaparse), never from the code under test:
// freeze-family events whose log carries no amount (USDT AddedBlackList/RemovedBlackList; USDP
// AddressFrozen/AddressUnfrozen/FrozenAddressWiped) are the public amount gaps.
const csv = (path: string) =>
  Papa.parse<Record<string, string>>(readFileSync(join(CAPTURE_DIR, path), "utf8"), {
    header: true,
    skipEmptyLines: true,
  }).data;
const usdtGaps = csv("bhemen-usdt/usdt_configs.csv").filter((r) =>
  ["AddedBlackList", "RemovedBlackList"].includes(r.event_name),
);
const usdpGaps = csv("bhemen-paxos-coins/usdp_configs.csv").filter((r) =>
  ["AddressFrozen", "AddressUnfrozen", "FrozenAddressWiped"].includes(r.event_name),
);
const idOf = (r: Record<string, string>) => `ethereum-${r.txhash.toLowerCase()}-${Number(r.log_index)}`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "ballast-remediate-"));
  process.env.BALLAST_LOG = "silent";
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("remediate-blacklist-amount-gaps over the recorded public freeze logs", () => {
  it("reports every recorded freeze row without an amount (the ledger is empty), filtered by coin, oldest first", async () => {
    const ledgerPath = join(dir, "ledger.duckdb");
    const { run, restore } = onchainCliRunner(["--ledger", ledgerPath, "--captureDir", CAPTURE_DIR]);
    try {
      expect(usdtGaps.length + usdpGaps.length).toBeGreaterThan(880);
      const all = await run("remediate-blacklist-amount-gaps", "--limit", "200");
      expect(all.code).toBe(0);
      expect(all.json).toMatchObject({ dryRun: true, gapRows: usdtGaps.length + usdpGaps.length, exhausted: 0 });
      expect(all.json.candidates).toHaveLength(200);
      const usdp = await run("remediate-blacklist-amount-gaps", "--stablecoin", "USDP");
      const oldestFirst = [...usdpGaps].sort((a, b) => Number(a.block_number) - Number(b.block_number));
      expect(usdp.json).toMatchObject({ gapRows: usdpGaps.length, candidates: oldestFirst.map(idOf) });
      const tron = await run("remediate-blacklist-amount-gaps", "--chainId", "tron");
      expect(tron.json.gapRows).toBe(0);
      // a real run without an Ethereum RPC reads nothing, so nothing is written to the ledger
      delete process.env.BALLAST_RPC_ETHEREUM;
      const wet = await run("remediate-blacklist-amount-gaps", "--stablecoin", "USDP", "--dryRun", "false");
      expect(wet.json).toMatchObject({ dryRun: false, attempted: 0, resolved: 0, skipped: usdpGaps.length });
    } finally {
      restore();
    }
    const ledger = await LedgerStore.open(ledgerPath);
    try {
      expect(await ledger.events()).toEqual([]);
    } finally {
      await ledger.close();
    }
  });
});
