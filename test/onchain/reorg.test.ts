import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestClient, http } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { syncAll } from "../../pipelines/onchain/ingest.ts";
import { LedgerStore } from "../../pipelines/onchain/ledger-store.ts";
import { EvmRpc } from "../../pipelines/sources/evm-rpc.ts";
import {
  ACTORS,
  type AnvilScenario,
  type ExpectedEvent,
  expectedView,
  rowView,
  startAnvilScenario,
} from "../helpers/anvil.ts";
import { must } from "../helpers/must.ts";

// A reorg on a real node: events are mined and ingested, the chain is reverted (evm_revert) and a
// different history is mined at the same heights; the orphaned rows must go and the new ones appear.

let s: AnvilScenario;
let dir: string;

beforeAll(async () => {
  s = await startAnvilScenario();
  dir = mkdtempSync(join(tmpdir(), "ballast-onchain-reorg-"));
});
afterAll(async () => {
  await s?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("reorg handling", () => {
  it("drops orphaned rows and reads the new history (new chain shorter than the cursor, then replaced at the same heights)", async () => {
    const test = createTestClient({ mode: "anvil", transport: http(s.rpcUrl) });
    const rpc = new EvmRpc({ chains: { ethereum: { urls: [s.rpcUrl], lag: 0 } }, timeoutMs: 5000 });
    const ledger = await LedgerStore.open(join(dir, "reorg.duckdb"));
    const { usdt, usdc } = s.contracts;
    const usdcFreeze = must(
      s.configs.find((c) => c.family === "circle-blacklist"),
      `the circle-blacklist config`,
    );
    const usdcSupply = must(
      s.configs.find((c) => c.family === "erc20-supply"),
      `the erc20-supply config`,
    );
    const usdtFreeze = must(
      s.configs.find((c) => c.family === "tether-legacy-blacklist"),
      `the tether-legacy-blacklist config`,
    );
    const freezeOf = (e: ExpectedEvent[]) =>
      e.filter(
        (x) =>
          x.configKey === usdcFreeze.configKey ||
          x.configKey === usdtFreeze.configKey ||
          x.configKey === usdcSupply.configKey,
      );
    const configs = [usdcFreeze, usdcSupply, usdtFreeze];
    try {
      await syncAll(ledger, rpc, configs);
      const base = freezeOf(s.expected);
      expect(rowView(await ledger.events())).toEqual(expectedView(base));
      const snapshot = await test.snapshot();

      // Fork A: erin gets 40,000 USDC units (mint) and is blacklisted on USDT (0 USDT); ingested.
      const a1 = await s.send(usdc, "mint", [ACTORS.erin, 40_000n]);
      const a2 = await s.send(usdt, "addBlackList", [ACTORS.erin]);
      const forkA = [
        ...s.expectFrom(a1, usdc, [
          {
            event: "Transfer",
            kind: "mint",
            address: ACTORS.erin,
            amount: 40_000n,
            source: "event",
            purpose: "supply",
          },
        ]),
        ...s.expectFrom(a2, usdt, [
          {
            event: "AddedBlackList",
            kind: "blacklist",
            address: ACTORS.erin,
            amount: 0n,
            source: "historical_balance",
            purpose: "freeze",
          },
        ]),
      ];
      await syncAll(ledger, rpc, configs);
      expect(rowView(await ledger.events())).toEqual(expectedView([...base, ...forkA]));

      // Revert below fork A: the chain is now shorter than the cursors.
      await test.revert({ id: snapshot });
      expect(await s.publicClient.getBlockNumber()).toBeLessThan(a1.blockNumber);
      const shorter = await syncAll(ledger, rpc, configs);
      expect(shorter.every((r) => r.reorgs >= 1 && r.status === "synced")).toBe(true);
      expect(rowView(await ledger.events())).toEqual(expectedView(base));

      // Fork B at the same heights (and one more block): different events.
      const b1 = await s.send(usdc, "mint", [ACTORS.bob, 55_555n]);
      const b2 = await s.send(usdc, "blacklist", [ACTORS.bob]);
      const b3 = await s.send(usdt, "addBlackList", [ACTORS.dave]);
      expect(Number(b1.blockNumber)).toBe(Number(a1.blockNumber));
      expect(b1.blockHash).not.toBe(a1.blockHash);
      const forkB = [
        ...s.expectFrom(b1, usdc, [
          { event: "Transfer", kind: "mint", address: ACTORS.bob, amount: 55_555n, source: "event", purpose: "supply" },
        ]),
        ...s.expectFrom(b2, usdc, [
          {
            event: "Blacklisted",
            kind: "blacklist",
            address: ACTORS.bob,
            amount: 55_555n,
            source: "historical_balance",
            purpose: "freeze",
          },
        ]),
        ...s.expectFrom(b3, usdt, [
          {
            event: "AddedBlackList",
            kind: "blacklist",
            address: ACTORS.dave,
            amount: 0n,
            source: "historical_balance",
            purpose: "freeze",
          },
        ]),
      ];
      await syncAll(ledger, rpc, configs);
      expect(rowView(await ledger.events())).toEqual(expectedView([...base, ...forkB]));

      // Same-height reorg with the cursor ON a replaced block: snapshot, mine fork C, ingest, revert, mine fork D.
      const snap2 = await test.snapshot();
      const c1 = await s.send(usdc, "mint", [ACTORS.carol, 1n]);
      await syncAll(ledger, rpc, configs, { reorgDepth: 2 });
      const forkC = s.expectFrom(c1, usdc, [
        { event: "Transfer", kind: "mint", address: ACTORS.carol, amount: 1n, source: "event", purpose: "supply" },
      ]);
      expect(rowView(await ledger.events())).toEqual(expectedView([...base, ...forkB, ...forkC]));
      await test.revert({ id: snap2 });
      const d1 = await s.send(usdc, "mint", [ACTORS.carol, 2n]);
      expect(d1.blockNumber).toBe(c1.blockNumber);
      const forkD = s.expectFrom(d1, usdc, [
        { event: "Transfer", kind: "mint", address: ACTORS.carol, amount: 2n, source: "event", purpose: "supply" },
      ]);
      const res = await syncAll(ledger, rpc, configs, { reorgDepth: 2 });
      expect(res.map((r) => r.reorgs)).toEqual([1, 1, 1]);
      // reorgDepth 2 below the cursor: only blocks above cursor − 2 were deleted and re-read
      expect(
        must(
          res.find((r) => r.configKey === usdcSupply.configKey),
          "the sync result of USDC's supply config",
        ).rolledBackRows,
      ).toBe(1);
      expect(rowView(await ledger.events())).toEqual(expectedView([...base, ...forkB, ...forkD]));
      const head = await s.publicClient.getBlock();
      expect((await ledger.cursors()).map((c) => [c.lastBlock, c.lastBlockHash])).toEqual(
        configs.map(() => [Number(head.number), head.hash]),
      );
    } finally {
      await ledger.close();
    }
  });
});
