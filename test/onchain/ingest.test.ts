import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OnchainEventRowSchema } from "../../pipelines/onchain/contract.ts";
import { syncAll } from "../../pipelines/onchain/ingest.ts";
import { LedgerStore } from "../../pipelines/onchain/ledger-store.ts";
import { EvmRpc } from "../../pipelines/sources/evm-rpc.ts";
import {
  ACTORS,
  type AnvilScenario,
  abiEventTopic,
  type ExpectedEvent,
  expectedView,
  rowView,
  startAnvilScenario,
} from "../helpers/anvil.ts";
import { must } from "../helpers/must.ts";
import { startRpcProxy } from "./rpc-proxy.ts";

let s: AnvilScenario;
let dir: string;
let n = 0;
const rpcFor = (url: string) => new EvmRpc({ chains: { ethereum: { urls: [url], lag: 0 } }, timeoutMs: 5000 });
const freshLedger = () => LedgerStore.open(join(dir, `ledger-${n++}.duckdb`));

beforeAll(async () => {
  s = await startAnvilScenario();
  dir = mkdtempSync(join(tmpdir(), "ballast-onchain-ingest-"));
});
afterAll(async () => {
  await s?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("fixture contracts", () => {
  it("emit exactly the registry's topic0 values", () => {
    const families = s.registry.eventFamilies;
    const check = (abi: typeof s.contracts.usdt.abi, family: string) => {
      for (const ev of families[family])
        expect(abiEventTopic(abi, ev.signature.slice(0, ev.signature.indexOf("(")))).toBe(ev.topic0);
    };
    check(s.contracts.usdt.abi, "tether-legacy-blacklist");
    check(s.contracts.usdt.abi, "tether-supply");
    check(s.contracts.usdc.abi, "circle-blacklist");
    check(s.contracts.usdc.abi, "erc20-supply");
    check(s.contracts.usdp.abi, "paxos-freeze");
    check(s.contracts.usdp.abi, "paxos-supply");
    expect(s.configs).toHaveLength(6);
  });
});

describe("syncAll against anvil", () => {
  it("writes exactly the scenario's events, with exact amounts, block times and hashes; a second run adds nothing", async () => {
    const ledger = await freshLedger();
    try {
      const rpc = rpcFor(s.rpcUrl);
      const head = Number(await s.publicClient.getBlockNumber());
      const results = await syncAll(ledger, rpc, s.configs);
      expect(results.map((r) => [r.status, r.lastBlock, r.caughtUp])).toEqual(
        s.configs.map(() => ["synced", head, true]),
      );
      const rows = await ledger.events();
      expect(rowView(rows)).toEqual(expectedView(s.expected));
      expect(s.expected).toHaveLength(20);
      for (const r of rows) {
        expect(OnchainEventRowSchema.safeParse(r).success).toBe(true);
        const block = await s.publicClient.getBlock({ blockNumber: BigInt(r.block_number) });
        expect(r.ts).toBe(Number(block.timestamp));
        expect(r.block_hash).toBe(block.hash);
        expect(r.origin).toBe("live");
        expect(r.amount_status).toBe("resolved");
      }
      const exp = new Map(s.expected.map((e) => [e.id, e]));
      for (const r of rows) {
        const e = exp.get(r.id) as ExpectedEvent;
        expect([r.block_number, r.log_index, r.tx_hash, r.event_name, r.stablecoin_id]).toEqual([
          e.block_number,
          e.log_index,
          e.tx_hash,
          e.event_name,
          e.stablecoinId,
        ]);
      }
      // amounts above 2^53 survive exactly
      expect(rows.find((r) => r.amount_raw === "123456789123456789012345678")).toBeDefined();
      expect(rows.find((r) => r.amount_raw === (2n ** 60n + 7n).toString())).toBeDefined();
      expect(await ledger.unknownTopics()).toEqual([]);
      expect((await ledger.cursors()).map((c) => c.lastBlock)).toEqual(s.configs.map(() => head));
      const again = await syncAll(ledger, rpc, s.configs);
      expect(again.map((r) => r.chunks)).toEqual(s.configs.map(() => 0));
      expect(rowView(await ledger.events())).toEqual(expectedView(s.expected));
      expect((await ledger.providerStates()).map((p) => [p.state, p.consecutiveFailures])).toEqual([["closed", 0]]);
    } finally {
      await ledger.close();
    }
  });

  it("counts logs of undeclared topics (a provider ignoring the topic filter) without changing the rows", async () => {
    const proxy = await startRpcProxy(s.rpcUrl, { ignoreTopics: true });
    const ledger = await freshLedger();
    try {
      const results = await syncAll(ledger, rpcFor(proxy.url), s.configs);
      expect(rowView(await ledger.events())).toEqual(expectedView(s.expected));
      const { usdt, usdc, usdp } = s.contracts;
      const key = (c: typeof usdt, fam: string) =>
        must(
          s.configs.find((x) => x.address === c.address && x.family === fam),
          `the ${fam} config of ${c.address}`,
        ).configKey;
      const t = (c: typeof usdt, name: string) => abiEventTopic(c.abi, name);
      // What the scenario emitted per contract, minus each family's own events (see startAnvilScenario).
      const want = [
        [key(usdc, "circle-blacklist"), t(usdc, "Burn"), 1],
        [key(usdc, "circle-blacklist"), t(usdc, "Mint"), 2],
        [key(usdc, "circle-blacklist"), t(usdc, "Transfer"), 4],
        [key(usdc, "erc20-supply"), t(usdc, "Blacklisted"), 2],
        [key(usdc, "erc20-supply"), t(usdc, "Burn"), 1],
        [key(usdc, "erc20-supply"), t(usdc, "Mint"), 2],
        [key(usdc, "erc20-supply"), t(usdc, "UnBlacklisted"), 1],
        [key(usdp, "paxos-freeze"), t(usdp, "SupplyDecreased"), 2],
        [key(usdp, "paxos-freeze"), t(usdp, "SupplyIncreased"), 1],
        [key(usdp, "paxos-freeze"), t(usdp, "Transfer"), 4],
        [key(usdp, "paxos-supply"), t(usdp, "AddressFrozen"), 2],
        [key(usdp, "paxos-supply"), t(usdp, "AddressUnfrozen"), 1],
        [key(usdp, "paxos-supply"), t(usdp, "FrozenAddressWiped"), 1],
        [key(usdp, "paxos-supply"), t(usdp, "Transfer"), 4],
        [key(usdt, "tether-legacy-blacklist"), t(usdt, "Issue"), 1],
        [key(usdt, "tether-legacy-blacklist"), t(usdt, "Redeem"), 1],
        [key(usdt, "tether-legacy-blacklist"), t(usdt, "Transfer"), 2],
        [key(usdt, "tether-supply"), t(usdt, "AddedBlackList"), 3],
        [key(usdt, "tether-supply"), t(usdt, "DestroyedBlackFunds"), 1],
        [key(usdt, "tether-supply"), t(usdt, "RemovedBlackList"), 1],
        [key(usdt, "tether-supply"), t(usdt, "Transfer"), 2],
      ]
        .map(([config_key, topic0, count]) => ({ config_key, topic0, count }))
        .sort((a, b) =>
          a.config_key === b.config_key ? (a.topic0 < b.topic0 ? -1 : 1) : a.config_key < b.config_key ? -1 : 1,
        );
      expect(await ledger.unknownTopics()).toEqual(want);
      const erc20 = must(
        results.find((r) => r.configKey === key(usdc, "erc20-supply")),
        "the sync result of USDC's erc20-supply config",
      );
      expect(erc20.ignoredLogs).toBe(1); // owner → dave, an ordinary transfer
    } finally {
      await ledger.close();
      await proxy.close();
    }
  });

  it("reads in small ranges up to maxChunks, resumes from the cursor, and picks up new events", async () => {
    const ledger = await freshLedger();
    try {
      const rpc = rpcFor(s.rpcUrl);
      const usdcFreeze = must(
        s.configs.find((c) => c.family === "circle-blacklist"),
        `the circle-blacklist config`,
      );
      const first = await syncAll(ledger, rpc, [usdcFreeze], { chunkSize: 3, maxChunks: 2 });
      expect(first[0]).toMatchObject({ chunks: 2, caughtUp: false, lastBlock: (usdcFreeze.startBlock as number) + 5 });
      const rest = await syncAll(ledger, rpc, [usdcFreeze], { chunkSize: 3 });
      expect(rest[0].caughtUp).toBe(true);
      expect(rowView(await ledger.events())).toEqual(
        expectedView(s.expected.filter((e) => e.configKey === usdcFreeze.configKey)),
      );

      // New history: carol gets 31,337 units, is blacklisted (amount = that balance), then unblacklisted.
      const { usdc } = s.contracts;
      const mint = await s.send(usdc, "mint", [ACTORS.carol, 31_337n]);
      const bl = await s.send(usdc, "blacklist", [ACTORS.carol]);
      const ubl = await s.send(usdc, "unBlacklist", [ACTORS.carol]);
      expect(mint.status).toBe("success");
      const added = [
        ...s.expectFrom(bl, usdc, [
          {
            event: "Blacklisted",
            kind: "blacklist",
            address: ACTORS.carol,
            amount: 31_337n,
            source: "historical_balance",
            purpose: "freeze",
          },
        ]),
        ...s.expectFrom(ubl, usdc, [
          {
            event: "UnBlacklisted",
            kind: "unblacklist",
            address: ACTORS.carol,
            amount: 31_337n,
            source: "historical_balance",
            purpose: "freeze",
          },
        ]),
      ];
      const inc = await syncAll(ledger, rpc, [usdcFreeze], { chunkSize: 3 });
      expect(inc[0]).toMatchObject({ status: "synced", rows: 2, caughtUp: true, lastBlock: Number(ubl.blockNumber) });
      expect(rowView(await ledger.events())).toEqual(
        expectedView([...s.expected.filter((e) => e.configKey === usdcFreeze.configKey), ...added]),
      );
    } finally {
      await ledger.close();
    }
  });

  it("counts and skips a log of a declared event that does not decode (AddedBlackList without data)", async () => {
    const ledger = await freshLedger();
    try {
      const usdtFreeze = must(
        s.configs.find((c) => c.family === "tether-legacy-blacklist"),
        `the tether-legacy-blacklist config`,
      );
      const bad = await s.send(s.contracts.usdt, "emitMalformedBlackList");
      expect(bad.logs).toHaveLength(1);
      const logs: { level: string; msg: string }[] = [];
      const res = await syncAll(ledger, rpcFor(s.rpcUrl), [usdtFreeze], {
        log: (level, msg) => logs.push({ level, msg }),
      });
      expect(res[0]).toMatchObject({
        status: "synced",
        malformedLogs: 1,
        caughtUp: true,
        lastBlock: Number(bad.blockNumber),
      });
      expect(rowView(await ledger.events())).toEqual(
        expectedView(s.expected.filter((e) => e.configKey === usdtFreeze.configKey)),
      );
      expect(logs).toContainEqual({ level: "warn", msg: "malformed logs skipped" });
    } finally {
      await ledger.close();
    }
  });

  it("skips configs it cannot read here and says why", async () => {
    const ledger = await freshLedger();
    try {
      const rpc = rpcFor(s.rpcUrl);
      const base = s.configs[0];
      const res = await syncAll(ledger, rpc, [
        { ...base, configKey: "x:tron:T1:tether-legacy-blacklist", chain: "tron", evmChainId: null },
        { ...base, configKey: "x:base:0x1:circle-blacklist", chain: "base", evmChainId: 8453 },
        {
          ...base,
          configKey: "x:ethereum:unresolved:f",
          address: null,
          unsupportedReason: "contract-address-unresolved",
        },
      ]);
      expect(res.map((r) => [r.status, r.reason])).toEqual([
        ["skipped", "not-an-evm-chain"],
        ["skipped", "no-rpc-configured"],
        ["skipped", "contract-address-unresolved"],
      ]);
      expect(await ledger.cursors()).toEqual([]);
    } finally {
      await ledger.close();
    }
  });
});
