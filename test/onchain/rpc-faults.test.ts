import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { syncAll } from "../../pipelines/onchain/ingest.ts";
import { remediateBlacklistAmountGaps } from "../../pipelines/onchain/jobs.ts";
import { LedgerStore } from "../../pipelines/onchain/ledger-store.ts";
import {
  EvmRpc,
  type EvmRpcOptions,
  isRangeLimitError,
  rpcOptionsFromEnv,
  RpcConfigError,
} from "../../pipelines/sources/evm-rpc.ts";
import {
  type AnvilHandle,
  type AnvilScenario,
  expectedView,
  rowView,
  startAnvil,
  startAnvilScenario,
} from "../helpers/anvil.ts";
import { freePort } from "../helpers/redis-server.ts";
import { RANGE_ERRORS, startRpcProxy } from "./rpc-proxy.ts";

// Provider faults on a real node behind a misbehaving local JSON-RPC proxy. Every run must still
// produce exactly the scenario's events.

let s: AnvilScenario;
let dir: string;
let n = 0;
const freshLedger = () => LedgerStore.open(join(dir, `ledger-${n++}.duckdb`));
const rpcOf = (urls: string[], extra: Partial<EvmRpcOptions> = {}) =>
  new EvmRpc({ chains: { ethereum: { urls, lag: 0 } }, timeoutMs: 5000, ...extra });

beforeAll(async () => {
  s = await startAnvilScenario();
  dir = mkdtempSync(join(tmpdir(), "ballast-onchain-faults-"));
});
afterAll(async () => {
  await s?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("adaptive eth_getLogs range splitting", () => {
  it("splits ranges a provider refuses as too large (every common range-limit answer) down to what it serves", async () => {
    const proxy = await startRpcProxy(s.rpcUrl, { maxRange: 4 });
    const ledger = await freshLedger();
    try {
      const rpc = rpcOf([proxy.url]);
      const res = await syncAll(ledger, rpc, s.configs);
      expect(res.every((r) => r.status === "synced" && r.caughtUp)).toBe(true);
      expect(rowView(await ledger.events())).toEqual(expectedView(s.expected));
      const refused = proxy.ranges.filter((r) => !r.served);
      expect(refused.length).toBeGreaterThanOrEqual(RANGE_ERRORS.length);
      expect(refused.every((r) => r.to - r.from + 1 > 4)).toBe(true);
      expect(proxy.ranges.filter((r) => r.served).every((r) => r.to - r.from + 1 <= 4)).toBe(true);
      expect(rpc.stats.splits).toBe(refused.length);
      // range limits are answers, not failures: the circuit stays closed
      expect(rpc.providerStates().map((p) => [p.state, p.consecutiveFailures])).toEqual([["closed", 0]]);
    } finally {
      await ledger.close();
      await proxy.close();
    }
  });

  it("splits when the answer is not a log list", async () => {
    const proxy = await startRpcProxy(s.rpcUrl, { malformedAbove: 6 });
    const ledger = await freshLedger();
    try {
      const rpc = rpcOf([proxy.url], { failureThreshold: 1000 });
      await syncAll(ledger, rpc, s.configs);
      expect(rowView(await ledger.events())).toEqual(expectedView(s.expected));
      expect(proxy.ranges.filter((r) => !r.served).length).toBeGreaterThan(0);
      expect(rpc.stats.splits).toBe(proxy.ranges.filter((r) => !r.served).length);
    } finally {
      await ledger.close();
      await proxy.close();
    }
  });

  it("splits when a wide range times out", async () => {
    const proxy = await startRpcProxy(s.rpcUrl, { slowAbove: 10, slowMs: 2500 });
    const ledger = await freshLedger();
    try {
      const rpc = rpcOf([proxy.url], { timeoutMs: 1000 });
      const usdc = s.configs.filter((c) => c.stablecoinId === "usdc-circle");
      const res = await syncAll(ledger, rpc, usdc);
      expect(res.every((r) => r.status === "synced")).toBe(true);
      expect(rowView(await ledger.events())).toEqual(
        expectedView(s.expected.filter((e) => e.stablecoinId === "usdc-circle")),
      );
      expect(rpc.stats.splits).toBeGreaterThan(0);
    } finally {
      await ledger.close();
      await proxy.close();
    }
  });

  it("gives up, after a bounded number of requests, on a provider whose every answer is malformed", async () => {
    const proxy = await startRpcProxy(s.rpcUrl, { malformedAbove: 0 });
    const ledger = await freshLedger();
    try {
      const usdcFreeze = s.configs.filter((c) => c.family === "circle-blacklist");
      const res = await syncAll(ledger, rpcOf([proxy.url]), usdcFreeze);
      expect(res[0].status).toBe("failed");
      expect(proxy.ranges.length).toBeLessThanOrEqual(2 * 64 + 1);
      expect(await ledger.countEvents()).toBe(0);
    } finally {
      await ledger.close();
      await proxy.close();
    }
  });

  it("recognises range-limit answers by code and message, and tells rate limiting apart", () => {
    expect(isRangeLimitError({ code: -32005, message: "whatever" })).toBe(true);
    expect(isRangeLimitError(new Error("query returned more than 10000 results"))).toBe(true);
    expect(isRangeLimitError(new Error("execution reverted"))).toBe(false);
    expect(isRangeLimitError({ code: -32005, message: "daily request count exceeded, request rate limited" })).toBe(
      false,
    );
    expect(isRangeLimitError(new Error("HTTP 429 Too Many Requests"))).toBe(false);
  });
});

describe("failover", () => {
  let wrongChain: AnvilHandle | null = null;
  afterAll(async () => {
    await wrongChain?.stop();
  });

  it("moves on from a dead provider and from one serving another chain; records circuit states in the ledger", async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    wrongChain = await startAnvil({ chainId: 31337 });
    const ledger = await freshLedger();
    try {
      const rpc = rpcOf([dead, wrongChain.rpcUrl, s.rpcUrl]);
      const res = await syncAll(ledger, rpc, s.configs);
      expect(res.every((r) => r.status === "synced")).toBe(true);
      expect(rowView(await ledger.events())).toEqual(expectedView(s.expected));
      expect(rpc.stats.failovers).toBeGreaterThan(0);
      const saved = await ledger.providerStates();
      expect(saved.map((p) => p.provider)).toEqual([
        `ethereum#0:${new URL(dead).host}`,
        `ethereum#1:${new URL(wrongChain.rpcUrl).host}`,
        `ethereum#2:${new URL(s.rpcUrl).host}`,
      ]);
      expect(saved[0]).toMatchObject({ state: "open", lastSuccessAt: null });
      expect(saved[0].consecutiveFailures).toBeGreaterThanOrEqual(3);
      expect(saved[1]).toMatchObject({ state: "open", lastSuccessAt: null });
      expect(saved[2]).toMatchObject({ state: "closed", consecutiveFailures: 0 });
      expect(saved[2].lastSuccessAt).toBeGreaterThan(1_600_000_000);
    } finally {
      await ledger.close();
    }
  });

  it("fails a config (and keeps its cursor) when every provider is down", async () => {
    const ledger = await freshLedger();
    try {
      const rpc = rpcOf([`http://127.0.0.1:${await freePort()}`]);
      const res = await syncAll(ledger, rpc, s.configs.slice(0, 1));
      expect(res[0].status).toBe("failed");
      expect(res[0].reason).toMatch(/failed on every provider/);
      expect(await ledger.cursors()).toEqual([]);
      expect(await ledger.countEvents()).toBe(0);
    } finally {
      await ledger.close();
    }
  });
});

describe("balance reads that fail", () => {
  it("leave amount null with status provider_failed (never zero); remediation resolves them later", async () => {
    const proxy = await startRpcProxy(s.rpcUrl, { failMethods: ["eth_call"] });
    const ledger = await freshLedger();
    try {
      const broken = rpcOf([proxy.url]);
      const res = await syncAll(ledger, broken, s.configs);
      const needRead = s.expected.filter((e) => e.amount_source === "historical_balance");
      expect(needRead.length).toBe(11); // 4 USDT, 3 USDC, 4 USDP freeze events without amount
      expect(res.reduce((a, r) => a + r.balanceFailures, 0)).toBe(needRead.length);
      const rows = await ledger.events();
      const failed = rows.filter((r) => r.amount_status === "provider_failed");
      expect(failed.map((r) => r.id).sort()).toEqual(needRead.map((e) => e.id).sort());
      for (const r of failed) expect([r.amount_raw, r.amount_source]).toEqual([null, "unavailable"]);
      expect(rows.filter((r) => r.amount_raw === "0")).toEqual([]); // bob's real zero balances are not known yet
      // rows with event amounts are unaffected
      expect(rowView(rows.filter((r) => r.amount_status === "resolved"))).toEqual(
        expectedView(s.expected.filter((e) => e.amount_source === "event")),
      );

      const dry = await remediateBlacklistAmountGaps(ledger, broken, s.configs, {});
      expect(dry).toMatchObject({ dryRun: true, gapRows: 11, exhausted: 0, attempted: 0 });
      expect(dry.candidates).toHaveLength(11);
      const stillBroken = await remediateBlacklistAmountGaps(ledger, broken, s.configs, {
        dryRun: "false",
        limit: "200",
      });
      expect(stillBroken).toMatchObject({ attempted: 11, resolved: 0, failed: 11 });
      expect((await ledger.events()).filter((r) => r.amount_status === "provider_failed")).toHaveLength(11);
      expect(
        await remediateBlacklistAmountGaps(ledger, broken, s.configs, { dryRun: false, maxAttempts: 1 }),
      ).toMatchObject({ gapRows: 11, exhausted: 11, candidates: [] });
      const usdcOnly = await remediateBlacklistAmountGaps(ledger, rpcOf([s.rpcUrl]), s.configs, {
        dryRun: false,
        stablecoin: "USDC",
      });
      expect(usdcOnly).toMatchObject({ attempted: 3, resolved: 3, failed: 0 });
      const fixed = await remediateBlacklistAmountGaps(ledger, rpcOf([s.rpcUrl]), s.configs, {
        dryRun: false,
        chainId: "ethereum",
        limit: 25,
      });
      expect(fixed).toMatchObject({ gapRows: 8, attempted: 8, resolved: 8, failed: 0 });
      expect(rowView(await ledger.events())).toEqual(expectedView(s.expected));
      expect(await ledger.amountAttempts()).toEqual(new Map());
    } finally {
      await ledger.close();
      await proxy.close();
    }
  });
});

describe("RPC config from env", () => {
  it("reads comma-separated providers and lags per chain, and lists every problem", () => {
    const cfg = rpcOptionsFromEnv({
      BALLAST_RPC_ETHEREUM: "http://a:1, http://b:2",
      BALLAST_RPC_POLYGON_ZKEVM: "https://c",
      BALLAST_SAFE_LAG_POLYGON_ZKEVM: "5",
      BALLAST_RPC_TIMEOUT_MS: "1500",
    });
    expect(cfg).toEqual({
      chains: { ethereum: { urls: ["http://a:1", "http://b:2"] }, "polygon-zkevm": { urls: ["https://c"], lag: 5 } },
      timeoutMs: 1500,
    });
    const rpc = new EvmRpc(cfg);
    expect([rpc.lag("ethereum"), rpc.lag("polygon-zkevm"), rpc.chains()]).toEqual([
      12,
      5,
      ["ethereum", "polygon-zkevm"],
    ]);
    expect(new EvmRpc({ chains: { base: { urls: ["http://x"] } } }).lag("base")).toBe(64);
    let err: unknown;
    try {
      rpcOptionsFromEnv({
        BALLAST_RPC_BASE: "ftp://x",
        BALLAST_RPC_ARBITRUM: "not a url",
        BALLAST_SAFE_LAG_BASE: "-1",
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RpcConfigError);
    expect((err as RpcConfigError).problems).toHaveLength(3);
  });
});
