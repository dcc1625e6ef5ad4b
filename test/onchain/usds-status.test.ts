import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Abi, type Address, createWalletClient, http, keccak256, toFunctionSelector, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCapture } from "../../build/capture.ts";
import { readLiveCaptures } from "../../build/captures.ts";
import { loadBuildConfig } from "../../build/config.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import { ENDPOINTS } from "../../pipelines/sources/endpoints.ts";
import { EvmRpc, revertReason, RpcUnavailableError } from "../../pipelines/sources/evm-rpc.ts";
import {
  ERC1967_IMPLEMENTATION_SLOT,
  readUsdsStatus,
  UsdsStatusPayloadSchema,
} from "../../pipelines/sources/usds/usds-status.ts";
import { type AnvilHandle, anvilClients, compileFixtureContracts, startAnvil } from "../helpers/anvil.ts";
import { freePort } from "../helpers/redis-server.ts";

// The USDS status reader against a real node: anvil with an ERC-1967 proxy (the USDS layout) whose
// implementation first has no freeze function, then one exposing `isBlocked(address)` — the same
// signatures the reader calls on Ethereum. Compiled with the solc npm package.

let anvil: AnvilHandle;
let proxy: Address;
let implNoFreeze: Address;
let implFreeze: Address;
let blockBeforeUpgrade: bigint;
let dir: string;
const SUPPLY = 123_456_789n * 10n ** 18n + 1n; // above 2^53: must stay exact
const rpcOf = (urls: string[]) => new EvmRpc({ chains: { ethereum: { urls, lag: 0 } }, timeoutMs: 3000 });

beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  anvil = await startAnvil();
  dir = mkdtempSync(join(tmpdir(), "ballast-usds-status-"));
  const compiled = compileFixtureContracts();
  const [ownerRaw] = await createWalletClient({ transport: http(anvil.rpcUrl) }).getAddresses();
  const { publicClient, walletClient } = anvilClients(anvil.rpcUrl, ownerRaw);
  const deploy = async (name: "UsdsProxyLike" | "UsdsImplNoFreeze" | "UsdsImplFreeze", args: unknown[] = []) => {
    const hash = await walletClient.deployContract({
      abi: compiled[name].abi,
      bytecode: compiled[name].bytecode,
      args,
      account: ownerRaw,
      chain: walletClient.chain,
    });
    const r = await publicClient.waitForTransactionReceipt({ hash });
    if (r.status !== "success" || !r.contractAddress) throw new Error(`deploy ${name} failed`);
    return r.contractAddress.toLowerCase() as Address;
  };
  const send = async (address: Address, abi: Abi, functionName: string, args: unknown[]) => {
    const hash = await walletClient.writeContract({
      address,
      abi,
      functionName,
      args,
      account: ownerRaw,
      chain: walletClient.chain,
    });
    const r = await publicClient.waitForTransactionReceipt({ hash });
    if (r.status !== "success") throw new Error(`${functionName} reverted`);
    return r.blockNumber;
  };
  implNoFreeze = await deploy("UsdsImplNoFreeze");
  implFreeze = await deploy("UsdsImplFreeze");
  proxy = await deploy("UsdsProxyLike", [implNoFreeze]);
  blockBeforeUpgrade = await send(proxy, compiled.UsdsImplNoFreeze.abi, "mint", [SUPPLY]);
  await send(proxy, compiled.UsdsProxyLike.abi, "upgradeTo", [implFreeze]);
  await send(proxy, compiled.UsdsImplFreeze.abi, "setBlocked", ["0x00000000000000000000000000000000000000aa", true]);
});
afterAll(async () => {
  await anvil?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("USDS status reader (viem readContract / getStorageAt at a block, anvil)", () => {
  it("the constants are what they claim: ERC-1967 slot and the isBlocked selector", () => {
    expect(ERC1967_IMPLEMENTATION_SLOT).toBe(
      toHex(BigInt(keccak256(toHex("eip1967.proxy.implementation"))) - 1n, { size: 32 }),
    );
    expect(toFunctionSelector("isBlocked(address)")).toBe("0xfbac3951");
  });

  it("before the upgrade: implementation from the ERC-1967 slot, isBlocked reverts (no freeze module), exact supply", async () => {
    const s = await readUsdsStatus(rpcOf([anvil.rpcUrl]), { token: proxy, blockNumber: blockBeforeUpgrade });
    expect(UsdsStatusPayloadSchema.parse(s)).toEqual(s);
    expect(s).toMatchObject({
      chain: "ethereum",
      evmChainId: 1,
      token: proxy,
      blockNumber: Number(blockBeforeUpgrade),
      implementationAddress: implNoFreeze,
      freezeProbe: { function: "isBlocked(address)", outcome: "reverted", result: null },
      totalSupplyRaw: SUPPLY.toString(),
    });
    expect(s.freezeProbe.reason).toMatch(/revert|no data/);
    expect(s.blockHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(s.blockTimestamp).toBeGreaterThan(1_600_000_000);
  });

  it("after the upgrade (default block = safe head, lag 0 here): the probe answers, so the freeze module is active", async () => {
    const rpc = rpcOf([anvil.rpcUrl]);
    const s = await readUsdsStatus(rpc, { token: proxy });
    expect(s.blockNumber).toBe(Number(await rpc.latestBlock("ethereum")));
    expect(s).toMatchObject({
      implementationAddress: implFreeze,
      freezeProbe: { outcome: "answered", result: false, reason: null },
      totalSupplyRaw: SUPPLY.toString(),
    });
    // the block pins the read: the pre-upgrade block still shows the old implementation
    const before = await readUsdsStatus(rpc, { token: proxy, blockNumber: blockBeforeUpgrade });
    expect(before.implementationAddress).toBe(implNoFreeze);
  });

  it("a dead provider fails over; all providers dead throws RpcUnavailableError (nothing invented); a transport error is not a revert", async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const s = await readUsdsStatus(rpcOf([dead, anvil.rpcUrl]), { token: proxy });
    expect(s.freezeProbe.outcome).toBe("answered");
    await expect(readUsdsStatus(rpcOf([dead]), { token: proxy })).rejects.toBeInstanceOf(RpcUnavailableError);
    expect(revertReason(new Error("fetch failed"))).toBeNull();
  });

  it("a provider serving another EVM chain id is refused", async () => {
    await expect(readUsdsStatus(rpcOf([anvil.rpcUrl]), { token: proxy, evmChainId: 5 })).rejects.toBeInstanceOf(
      RpcUnavailableError,
    );
  });
});

describe("USDS status capture (raw/usds/<day>/<id>.json.gz through `capture`)", () => {
  it("writes one capture the build's reader turns into one row; skipped without an Ethereum provider", async () => {
    const sink = new FsSink(dir);
    const config = loadBuildConfig({ BALLAST_DATA_DIR: dir });
    const plan = [{ endpoint: "usds.status", params: {} }];
    // without BALLAST_RPC_ETHEREUM nothing is read or written
    expect(await runCapture(config, sink, { plan, env: {} })).toEqual([]);

    const rpc = rpcOf([anvil.rpcUrl]);
    const head = await readUsdsStatus(rpc, { token: proxy });
    const observedAt = head.blockTimestamp + 60;
    // the real endpoint reads the USDS address; point it at the fixture proxy for the test
    const ep = ENDPOINTS["usds.status"];
    const original = ep.fetchRpc;
    ep.fetchRpc = { chain: "ethereum", fetch: (r) => readUsdsStatus(r, { token: proxy }) };
    let written: string[];
    try {
      written = await runCapture(config, sink, { plan, rpc, now: () => observedAt * 1000 });
    } finally {
      ep.fetchRpc = original;
    }
    const day = new Date(observedAt * 1000).toISOString().slice(0, 10);
    expect(written).toEqual([`raw/usds/${day}/usds.status-${observedAt}.json.gz`]);
    const captures = (await readLiveCaptures(sink)).filter((c) => c.endpoint === "usds.status");
    expect(captures).toHaveLength(1);
    expect(captures[0]).toMatchObject({ observedAt, origin: "live", path: written[0] });
    const payload = UsdsStatusPayloadSchema.parse(captures[0].payload);
    expect(payload).toMatchObject({
      token: proxy,
      implementationAddress: implFreeze,
      freezeProbe: { outcome: "answered" },
    });
    const parsed = ep.toRows(payload, captures[0]);
    expect(parsed.dropped).toEqual({});
    expect(parsed.rows).toEqual([
      expect.objectContaining({
        token: proxy,
        implementation_address: implFreeze,
        probe_outcome: "answered",
        probe_result: false,
        total_supply_raw: SUPPLY.toString(),
        observed_at: observedAt,
        capture_path: written[0],
      }),
    ]);
    // a read whose block is later than its observation is refused at load
    expect(ep.toRows(payload, { ...captures[0], observedAt: payload.blockTimestamp - 1 }).dropped).toEqual({
      "block-after-observation": 1,
    });
  });
});
