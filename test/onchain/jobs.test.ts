import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runOnchainCli } from "../../build/onchain-cli.ts";
import { syncAll } from "../../pipelines/onchain/ingest.ts";
import {
  backfillBlacklistCurrentBalances,
  backfillMintBurn,
  debugSyncState,
  JobInputError,
  resetBlacklistSync,
} from "../../pipelines/onchain/jobs.ts";
import { LedgerStore } from "../../pipelines/onchain/ledger-store.ts";
import type { TrackedConfig } from "../../pipelines/onchain/tracked.ts";
import { EvmRpc } from "../../pipelines/sources/evm-rpc.ts";
import { ACTORS, type AnvilScenario, expectedView, rowView, startAnvilScenario } from "../helpers/anvil.ts";
import { must } from "../helpers/must.ts";
import { onchainCliRunner } from "../helpers/onchain-cli.ts";

let s: AnvilScenario;
let dir: string;
let n = 0;
const freshLedger = () => LedgerStore.open(join(dir, `ledger-${n++}.duckdb`));
const rpcOf = () => new EvmRpc({ chains: { ethereum: { urls: [s.rpcUrl], lag: 0 } }, timeoutMs: 5000 });
const cfg = (family: string) =>
  must(
    s.configs.find((c) => c.family === family),
    `the ${family} config`,
  );

async function rejection(p: Promise<unknown>): Promise<JobInputError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(JobInputError);
  expect((err as JobInputError).status).toBe(400);
  return err as JobInputError;
}

beforeAll(async () => {
  s = await startAnvilScenario();
  dir = mkdtempSync(join(tmpdir(), "ballast-onchain-jobs-"));
});
afterAll(async () => {
  await s?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("reset-blacklist-sync and debug-sync-state", () => {
  it("rolls EVM freeze cursors back 50,000 blocks and Tron ones 7 days; supply cursors stay", async () => {
    const ledger = await freshLedger();
    try {
      const base = cfg("circle-blacklist");
      const configs: TrackedConfig[] = [
        { ...base, configKey: "a:ethereum:0xa:circle-blacklist", startBlock: null },
        { ...base, configKey: "b:ethereum:0xb:circle-blacklist", startBlock: 20_000 },
        { ...base, configKey: "c:tron:Tc:tether-legacy-blacklist", chain: "tron", evmChainId: null },
        { ...cfg("erc20-supply"), configKey: "d:ethereum:0xd:erc20-supply" },
      ];
      await ledger.setCursors(
        [
          { configKey: "a:ethereum:0xa:circle-blacklist", lastBlock: 120_000, lastBlockHash: "0xaa" },
          { configKey: "b:ethereum:0xb:circle-blacklist", lastBlock: 60_000, lastBlockHash: "0xbb" },
          { configKey: "c:tron:Tc:tether-legacy-blacklist", lastBlock: 1_700_000_000_000, lastBlockHash: null },
          { configKey: "d:ethereum:0xd:erc20-supply", lastBlock: 90_000, lastBlockHash: "0xdd" },
          { configKey: "z:ethereum:0xz:not-in-registry", lastBlock: 5, lastBlockHash: null },
        ],
        1000,
      );
      expect(await resetBlacklistSync(ledger, configs, { nowSec: () => 2000 })).toEqual({
        ok: true,
        evmReset: 2,
        tronReset: 1,
      });
      expect(await debugSyncState(ledger)).toEqual([
        { config_key: "a:ethereum:0xa:circle-blacklist", last_block: 70_000 },
        // b: 60,000 − 50,000 is below its start block 20,000 → cursor removed (re-read from the start block)
        { config_key: "c:tron:Tc:tether-legacy-blacklist", last_block: 1_699_395_200_000 },
        { config_key: "d:ethereum:0xd:erc20-supply", last_block: 90_000 },
        { config_key: "z:ethereum:0xz:not-in-registry", last_block: 5 },
      ]);
      expect(await ledger.getCursor("a:ethereum:0xa:circle-blacklist")).toEqual({
        configKey: "a:ethereum:0xa:circle-blacklist",
        lastBlock: 70_000,
        lastBlockHash: null,
        updatedAt: 2000,
      });
    } finally {
      await ledger.close();
    }
  });

  it("after a reset the freeze configs are re-read without duplicates", async () => {
    const ledger = await freshLedger();
    try {
      const rpc = rpcOf();
      await syncAll(ledger, rpc, s.configs);
      const head = Number(await s.publicClient.getBlockNumber());
      expect(await debugSyncState(ledger)).toEqual(
        s.configs
          .map((c) => ({ config_key: c.configKey, last_block: head }))
          .sort((a, b) => (a.config_key < b.config_key ? -1 : 1)),
      );
      expect(await resetBlacklistSync(ledger, s.configs)).toEqual({ ok: true, evmReset: 3, tronReset: 0 });
      expect((await debugSyncState(ledger)).map((c) => c.config_key)).toEqual(
        s.configs.filter((c) => c.purpose === "supply").map((c) => c.configKey),
      );
      const again = await syncAll(ledger, rpc, s.configs);
      expect(again.filter((r) => r.chunks > 0).map((r) => r.configKey)).toEqual(
        s.configs.filter((c) => c.purpose === "freeze").map((c) => c.configKey),
      );
      expect(rowView(await ledger.events())).toEqual(expectedView(s.expected));
    } finally {
      await ledger.close();
    }
  });
});

describe("backfill-mint-burn", () => {
  it("re-reads a range idempotently, replacing what the ledger had there, without moving the cursor", async () => {
    const ledger = await freshLedger();
    try {
      const rpc = rpcOf();
      const supply = cfg("erc20-supply");
      await syncAll(ledger, rpc, [supply]);
      const cursor = await ledger.getCursor(supply.configKey);
      const mine = s.expected.filter((e) => e.configKey === supply.configKey);
      // a stale row inside the range (e.g. left by an old reorg) must disappear
      const [real] = await ledger.events({ configKeys: [supply.configKey] });
      await ledger.commitRange({
        configKey: supply.configKey,
        rows: [{ ...real, id: `ethereum-0x${"ee".repeat(32)}-7`, tx_hash: `0x${"ee".repeat(32)}`, amount_raw: "999" }],
        nowSec: 1,
      });
      expect(await ledger.countEvents(supply.configKey)).toBe(mine.length + 1);
      const head = Number(await s.publicClient.getBlockNumber());
      const params = {
        configKey: supply.configKey,
        fromBlock: String(supply.startBlock),
        toBlock: String(head + 1000),
        chunkSize: "4",
      };
      const r1 = await backfillMintBurn(ledger, rpc, s.configs, params);
      expect(r1).toMatchObject({
        toBlock: head,
        safeHead: head,
        done: true,
        nextFromBlock: null,
        processedThrough: head,
        chunks: Math.ceil((head - (supply.startBlock as number) + 1) / 4),
        rows: mine.length,
      });
      expect(rowView(await ledger.events())).toEqual(expectedView(mine));
      const r2 = await backfillMintBurn(ledger, rpc, s.configs, params);
      expect(r2.rows).toBe(mine.length);
      expect(rowView(await ledger.events())).toEqual(expectedView(mine));
      expect(await ledger.getCursor(supply.configKey)).toEqual(cursor);

      const partial = await backfillMintBurn(ledger, rpc, s.configs, {
        configKey: supply.configKey,
        fromBlock: 0,
        toBlock: head,
        chunkSize: 5,
        maxChunks: 2,
      });
      expect(partial).toMatchObject({ chunks: 2, done: false, processedThrough: 9, nextFromBlock: 10 });
    } finally {
      await ledger.close();
    }
  });

  it("rejects bad input with a 400-class JobInputError", async () => {
    const ledger = await freshLedger();
    try {
      const rpc = rpcOf();
      const key = cfg("erc20-supply").configKey;
      expect(
        (await rejection(backfillMintBurn(ledger, rpc, s.configs, { configKey: "nope", fromBlock: 0, toBlock: 1 })))
          .message,
      ).toMatch(/unknown configKey/);
      expect(
        (
          await rejection(
            backfillMintBurn(ledger, rpc, s.configs, {
              configKey: cfg("circle-blacklist").configKey,
              fromBlock: 0,
              toBlock: 1,
            }),
          )
        ).message,
      ).toMatch(/not a mint\/burn/);
      expect(
        (
          await rejection(
            backfillMintBurn(ledger, rpc, s.configs, { configKey: key, fromBlock: 0, toBlock: 1, chunkSize: 50_001 }),
          )
        ).message,
      ).toMatch(/chunkSize/);
      expect(
        (await rejection(backfillMintBurn(ledger, rpc, s.configs, { configKey: key, fromBlock: 5, toBlock: 1 })))
          .message,
      ).toMatch(/toBlock/);
      expect(
        (await rejection(backfillMintBurn(ledger, rpc, s.configs, { configKey: key, fromBlock: "x", toBlock: 1 })))
          .message,
      ).toMatch(/fromBlock/);
    } finally {
      await ledger.close();
    }
  });
});

describe("backfill-blacklist-current-balances", () => {
  it("snapshots current balances of blacklisted addresses (kept after unblacklist); dry run only counts", async () => {
    const ledger = await freshLedger();
    try {
      const rpc = rpcOf();
      await syncAll(ledger, rpc, s.configs);
      const head = Number(await s.publicClient.getBlockNumber());
      const dry = await backfillBlacklistCurrentBalances(ledger, rpc, s.configs, {});
      expect(dry.dryRun).toBe(true);
      expect(dry.configs.map((c) => [c.configKey, c.blacklistedAddresses, c.selected, c.written])).toEqual([
        [cfg("circle-blacklist").configKey, 2, 2, 0],
        [cfg("paxos-freeze").configKey, 2, 2, 0],
        [cfg("tether-legacy-blacklist").configKey, 3, 3, 0],
      ]);
      expect(await ledger.currentBalances()).toEqual([]);

      const usdc = await backfillBlacklistCurrentBalances(ledger, rpc, s.configs, {
        stablecoin: "USDC",
        dryRun: "false",
      });
      expect(usdc.totals).toEqual({ selected: 2, read: 2, written: 2, failed: 0 });
      const key = cfg("circle-blacklist").configKey;
      expect(
        (await ledger.currentBalances()).map((b) => [b.configKey, b.address, b.balanceRaw, b.blockNumber]),
      ).toEqual(
        [
          [key, ACTORS.alice, "1500000", head], // unblacklisted since, still tracked
          [key, ACTORS.dave, "10000", head],
        ].sort((a, b) => (a[1] < b[1] ? -1 : 1)),
      );

      // limit 3 over everything: 3 of the 5 never-snapshotted addresses, none of the 2 snapshotted USDC ones
      const some = await backfillBlacklistCurrentBalances(ledger, rpc, s.configs, { dryRun: false, limit: 3 });
      expect(some.totals.written).toBe(3);
      expect(
        must(
          some.configs.find((c) => c.configKey === key),
          `the backfill result of ${key}`,
        ).selected,
      ).toBe(0);
      const all = await backfillBlacklistCurrentBalances(ledger, rpc, s.configs, {
        dryRun: false,
        chainId: "ethereum",
      });
      expect(all.totals.written).toBe(7);
      const byAddr = Object.fromEntries(
        (await ledger.currentBalances()).map((b) => [`${b.configKey.split(":")[0]}:${b.address}`, b.balanceRaw]),
      );
      expect(byAddr).toEqual({
        [`usdc-circle:${ACTORS.alice}`]: "1500000",
        [`usdc-circle:${ACTORS.dave}`]: "10000",
        [`usdp-paxos:${ACTORS.erin}`]: "0",
        [`usdp-paxos:${ACTORS.bob}`]: "0",
        [`usdt-tether:${ACTORS.alice}`]: "0",
        [`usdt-tether:${ACTORS.bob}`]: "0",
        [`usdt-tether:${ACTORS.carol}`]: "5000000",
      });
      expect(
        (await rejection(backfillBlacklistCurrentBalances(ledger, rpc, s.configs, { stablecoin: "nope" }))).message,
      ).toMatch(/no tracked freeze config/);
      expect(
        (await rejection(backfillBlacklistCurrentBalances(ledger, rpc, s.configs, { limit: 2001 }))).message,
      ).toMatch(/limit/);
    } finally {
      await ledger.close();
    }
  });
});

describe("onchain CLI", () => {
  it("prints job results as JSON, exit 0; bad input → exit 2 with { error }", async () => {
    const ledgerPath = join(dir, "cli.duckdb");
    const registryPath = join(dir, "registry.json");
    writeFileSync(registryPath, JSON.stringify(s.registry));
    process.env.BALLAST_RPC_ETHEREUM = s.rpcUrl;
    process.env.BALLAST_SAFE_LAG_ETHEREUM = "0";
    process.env.BALLAST_LOG = "silent";
    const { run, printed, clear, restore } = onchainCliRunner(["--ledger", ledgerPath, "--registry", registryPath]);
    try {
      const ingest = await run("ingest", "--chunk-size", "50000");
      expect(ingest.code).toBe(0);
      expect(ingest.json.results).toHaveLength(6);
      const head = Number(await s.publicClient.getBlockNumber());
      const state = await run("debug-sync-state");
      expect(state).toEqual({
        code: 0,
        json: s.configs
          .map((c) => ({ config_key: c.configKey, last_block: head }))
          .sort((a, b) => (a.config_key < b.config_key ? -1 : 1)),
      });
      // captureDir without recorded logs: the ledger's rows alone (recorded gaps: remediate-recorded.test.ts)
      const rem = await run("remediate-blacklist-amount-gaps", "--dryRun", "true", "--captureDir", dir);
      expect(rem).toMatchObject({ code: 0, json: { dryRun: true, gapRows: 0 } });
      expect(await run("backfill-mint-burn", "--fromBlock", "5")).toMatchObject({
        code: 2,
        json: { error: expect.stringMatching(/configKey/) },
      });
      expect(await run("backfill-blacklist-current-balances", "--stablecoin", "nope")).toMatchObject({
        code: 2,
        json: { error: expect.stringMatching(/no tracked freeze config/) },
      });
      expect(await run("reset-blacklist-sync", "--oops")).toMatchObject({
        code: 2,
        json: { error: "--oops needs a value" },
      });
      clear();
      expect(await runOnchainCli(["no-such-job"])).toBe(2);
      expect(printed()).toMatch(/^usage: tsx build\/onchain-cli.ts/);
    } finally {
      restore();
    }
    const ledger = await LedgerStore.open(ledgerPath);
    try {
      expect(rowView(await ledger.events())).toEqual(expectedView(s.expected));
    } finally {
      await ledger.close();
    }
  });
});
