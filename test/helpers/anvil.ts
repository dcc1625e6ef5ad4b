import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import {
  type Abi,
  type Address,
  type Hex,
  type Log,
  type PublicClient,
  type TransactionReceipt,
  type WalletClient,
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  toEventSelector,
} from "viem";
import { configKey } from "../../pipelines/onchain/contract.ts";
import { type TrackedConfig, trackedConfigs } from "../../pipelines/onchain/tracked.ts";
import { loadRegistry } from "../../pipelines/registry/registry.ts";
import type { Registry, TrackedContract } from "../../pipelines/registry/schema.ts";
import { freePort } from "./redis-server.ts";

/**
 * Test helpers for on-chain ingestion against a REAL local node: `anvil` (npm
 * `@foundry-rs/anvil-linux-amd64`) on a free loopback port, and small Solidity contracts
 * (test/fixtures/contracts/*.sol, compiled with the `solc` npm package) that emit the exact
 * production event signatures of legacy USDT, Circle FiatToken (USDC) and Paxos (USDP/PAXG).
 */

const ROOT = resolve(import.meta.dirname, "../..");
/** The solc npm package (CommonJS, untyped): only the two calls used here. */
const solc = createRequire(import.meta.url)("solc") as { compile(input: string): string; version(): string };
/** Path of the anvil binary shipped by the npm package. */
export const ANVIL_BIN = join(ROOT, "node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil");
const CONTRACTS_DIR = join(ROOT, "test/fixtures/contracts");

/** A running anvil process. `stop()` kills it (SIGKILL after 2 s of SIGTERM) and is idempotent. */
export interface AnvilHandle {
  rpcUrl: string;
  port: number;
  chainId: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const c of running) c.kill("SIGKILL");
});

async function rpcAnswers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(500),
    });
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * Starts anvil on a free 127.0.0.1 port (`--silent`, automine: one block per transaction) and waits
 * until it answers JSON-RPC. `chainId` defaults to 1 so the registry's `ethereum` configs (evmChainId 1)
 * match. Throws when anvil does not answer within 15 s.
 */
export async function startAnvil(opts: { chainId?: number } = {}): Promise<AnvilHandle> {
  const chainId = opts.chainId ?? 1;
  const port = await freePort();
  const child = spawn(
    ANVIL_BIN,
    ["--port", String(port), "--host", "127.0.0.1", "--silent", "--chain-id", String(chainId)],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  running.add(child);
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += String(d);
  });
  const exited = new Promise<void>((r) =>
    child.once("exit", () => {
      running.delete(child);
      r();
    }),
  );
  const rpcUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  while (!(await rpcAnswers(rpcUrl))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`anvil did not start on port ${port}: ${stderr.slice(0, 500)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  let stopped: Promise<void> | null = null;
  return {
    rpcUrl,
    port,
    chainId,
    process: child,
    stop() {
      if (stopped) return stopped;
      stopped = (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill("SIGTERM");
          const t = setTimeout(() => child.kill("SIGKILL"), 2000);
          await exited;
          clearTimeout(t);
        }
      })();
      return stopped;
    },
  };
}

/** ABI and creation bytecode of one compiled fixture contract. */
export interface CompiledContract {
  abi: Abi;
  bytecode: Hex;
}
/** The fixture contracts by name. */
export type FixtureName = "TetherLike" | "CircleLike" | "PaxosLike";
/** Every compiled fixture contract: the three tokens plus the USDS proxy and its two implementations. */
export type CompiledName = FixtureName | "UsdsProxyLike" | "UsdsImplNoFreeze" | "UsdsImplFreeze";

/**
 * Compiles every `test/fixtures/contracts/*.sol` with the solc npm package (standard JSON input,
 * optimizer on). The output is cached under the OS temp dir keyed by sha256(solc version + sources),
 * so only the first test file of a machine pays the ~seconds of the JS compiler. Throws with the
 * compiler's messages when compilation fails.
 */
export function compileFixtureContracts(): Record<CompiledName, CompiledContract> {
  const files = readdirSync(CONTRACTS_DIR)
    .filter((f) => f.endsWith(".sol"))
    .sort();
  const sources: Record<string, { content: string }> = {};
  for (const f of files) sources[f] = { content: readFileSync(join(CONTRACTS_DIR, f), "utf8") };
  const key = createHash("sha256").update(solc.version()).update(JSON.stringify(sources)).digest("hex").slice(0, 24);
  const cacheDir = join(tmpdir(), "ballast-solc-cache");
  const cacheFile = join(cacheDir, `${key}.json`);
  if (existsSync(cacheFile)) return JSON.parse(readFileSync(cacheFile, "utf8"));
  const input = {
    language: "Solidity",
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: "cancun",
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (output.errors ?? []).filter((e: { severity: string }) => e.severity === "error");
  if (errors.length)
    throw new Error(`solc: ${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join("\n")}`);
  const out = {} as Record<CompiledName, CompiledContract>;
  for (const [file, contracts] of Object.entries(
    output.contracts as Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>,
  )) {
    for (const [name, c] of Object.entries(contracts)) {
      if (`${name}.sol` !== file) continue;
      out[name as CompiledName] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
    }
  }
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(cacheFile, JSON.stringify(out));
  return out;
}

/** keccak256 topic0 of an event of a compiled ABI, computed by viem from the ABI item (not from the registry). */
export function abiEventTopic(abi: Abi, name: string): Hex {
  const item = abi.find((x) => x.type === "event" && x.name === name);
  if (item?.type !== "event") throw new Error(`event ${name} not in ABI`);
  return toEventSelector(item);
}

/** A deployed fixture contract: lowercase address, ABI and the block of its deployment. */
export interface DeployedContract {
  name: FixtureName;
  address: Address;
  abi: Abi;
  deployBlock: number;
}

/** One event the scenario caused on chain, as the test knows it (what it sent), keyed like an OnchainEventRow. */
export interface ExpectedEvent {
  /** `ethereum-{txHash}-{logIndex}` from the transaction receipt. */
  id: string;
  configKey: string;
  stablecoinId: string;
  kind: "blacklist" | "unblacklist" | "destroy" | "mint" | "burn";
  /** Lowercase 0x-hex. */
  address: string;
  /** Base units as decimal digits: the amount the test sent, or the holder's balance the test built up before the event. */
  amount_raw: string;
  /** `event` when the log carries the amount, `historical_balance` when it is a balance at block − 1. */
  amount_source: "event" | "historical_balance";
  event_name: string;
  tx_hash: string;
  log_index: number;
  block_number: number;
}

/** Well-known, easy-to-read holder addresses used by the scenario (lowercase). */
export const ACTORS = {
  alice: "0xa11ce00000000000000000000000000000000001",
  bob: "0xb0b0000000000000000000000000000000000002",
  carol: "0xca40100000000000000000000000000000000003",
  dave: "0xd00d000000000000000000000000000000000004",
  erin: "0xe0e0000000000000000000000000000000000005",
} as const satisfies Record<string, Address>;

/** The anvil scenario: a node with the three fixture tokens deployed and a fixed history of events. */
export interface AnvilScenario {
  rpcUrl: string;
  anvil: AnvilHandle;
  publicClient: PublicClient;
  walletClient: WalletClient;
  /** The deployer: owner / minter / supply controller of every fixture token (lowercase). */
  owner: Address;
  contracts: { usdt: DeployedContract; usdc: DeployedContract; usdp: DeployedContract };
  /**
   * The committed registry with `usdt-tether`, `usdc-circle` and `usdp-paxos` tracking only the
   * deployed contracts on `ethereum` (evmChainId 1, startBlock = deployment block) and every other
   * coin's freezeContracts/supplyContracts emptied, so it describes exactly this chain.
   */
  registry: Registry;
  /** trackedConfigs(registry): 6 configs (freeze + supply for each of the 3 tokens). */
  configs: TrackedConfig[];
  /** Every tracked event the scenario emitted, in chain order. */
  expected: ExpectedEvent[];
  /** Sends a contract call from the owner, mines it (automine) and returns the successful receipt; throws on revert. */
  send(contract: DeployedContract, functionName: string, args?: readonly unknown[]): Promise<TransactionReceipt>;
  /** Expected events of one receipt, given what the call was meant to emit (see `expectFrom`). */
  expectFrom(receipt: TransactionReceipt, contract: DeployedContract, specs: EventSpec[]): ExpectedEvent[];
  stop(): Promise<void>;
}

/** What the test expects one log of a receipt to be: matched in order among logs with that event name. */
export interface EventSpec {
  event: string;
  kind: ExpectedEvent["kind"];
  address: string;
  amount: bigint;
  source: ExpectedEvent["amount_source"];
  purpose: "freeze" | "supply";
}

const FAMILIES: Record<FixtureName, { stablecoinId: string; freeze: string; supply: string; decimals: number }> = {
  TetherLike: { stablecoinId: "usdt-tether", freeze: "tether-legacy-blacklist", supply: "tether-supply", decimals: 6 },
  CircleLike: { stablecoinId: "usdc-circle", freeze: "circle-blacklist", supply: "erc20-supply", decimals: 6 },
  PaxosLike: { stablecoinId: "usdp-paxos", freeze: "paxos-freeze", supply: "paxos-supply", decimals: 18 },
};

/**
 * A Registry whose three fixture coins track the deployed contracts on `ethereum` (freeze + supply
 * family each) and whose other coins track nothing. Families, chains and coin metadata are the
 * committed registry's.
 */
export function scenarioRegistry(contracts: DeployedContract[], base: Registry = loadRegistry()): Registry {
  const byCoin = new Map(contracts.map((c) => [FAMILIES[c.name].stablecoinId, c]));
  const tracked = (c: DeployedContract, family: string): TrackedContract => ({
    chain: "ethereum",
    evmChainId: 1,
    address: c.address.toLowerCase(),
    decimals: FAMILIES[c.name].decimals,
    startBlock: c.deployBlock,
    family,
    contractSource: "primary",
  });
  return {
    ...base,
    coins: base.coins.map((coin) => {
      const c = byCoin.get(coin.id);
      if (!c) return { ...coin, freezeContracts: [], supplyContracts: [] };
      return {
        ...coin,
        freezeContracts: [tracked(c, FAMILIES[c.name].freeze)],
        supplyContracts: [tracked(c, FAMILIES[c.name].supply)],
      };
    }),
  };
}

/** viem clients for an anvil node (polling 50 ms, no response cache) with `account` as the JSON-RPC sender. */
export function anvilClients(
  rpcUrl: string,
  account: Address,
  chainId = 1,
): { publicClient: PublicClient; walletClient: WalletClient } {
  const chain = defineChain({
    id: chainId,
    name: "anvil",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  return {
    publicClient: createPublicClient({
      chain,
      transport: http(rpcUrl),
      pollingInterval: 50,
      cacheTime: 0,
    }) as PublicClient,
    walletClient: createWalletClient({ chain, transport: http(rpcUrl), account, pollingInterval: 50, cacheTime: 0 }),
  };
}

/**
 * Deploys the fixture contracts on a running anvil from its first unlocked account. Returns the
 * clients, the owner and the deployed contracts with helpers to send calls and build expectations.
 */
export async function deployFixtures(
  anvil: AnvilHandle,
): Promise<Omit<AnvilScenario, "registry" | "configs" | "expected" | "stop">> {
  const compiled = compileFixtureContracts();
  const probe = createWalletClient({ transport: http(anvil.rpcUrl) });
  const [ownerRaw] = await probe.getAddresses();
  const owner = ownerRaw.toLowerCase() as Address;
  const { publicClient, walletClient } = anvilClients(anvil.rpcUrl, owner, anvil.chainId);
  const deploy = async (name: FixtureName): Promise<DeployedContract> => {
    const hash = await walletClient.deployContract({
      abi: compiled[name].abi,
      bytecode: compiled[name].bytecode,
      account: owner,
      chain: walletClient.chain,
    });
    const r = await publicClient.waitForTransactionReceipt({ hash });
    if (r.status !== "success" || !r.contractAddress) throw new Error(`deploy ${name} failed`);
    return {
      name,
      address: r.contractAddress.toLowerCase() as Address,
      abi: compiled[name].abi,
      deployBlock: Number(r.blockNumber),
    };
  };
  const contracts = {
    usdt: await deploy("TetherLike"),
    usdc: await deploy("CircleLike"),
    usdp: await deploy("PaxosLike"),
  };
  const send = async (
    contract: DeployedContract,
    functionName: string,
    args: readonly unknown[] = [],
  ): Promise<TransactionReceipt> => {
    const hash = await walletClient.writeContract({
      address: contract.address,
      abi: contract.abi,
      functionName,
      args,
      account: owner,
      chain: walletClient.chain,
    });
    const r = await publicClient.waitForTransactionReceipt({ hash });
    if (r.status !== "success") throw new Error(`${contract.name}.${functionName} reverted`);
    return r;
  };
  const expectFrom = (receipt: TransactionReceipt, contract: DeployedContract, specs: EventSpec[]): ExpectedEvent[] => {
    const used = new Set<Log>();
    return specs.map((s) => {
      const topic = abiEventTopic(contract.abi, s.event);
      const log = receipt.logs.find(
        (l) => !used.has(l) && l.address.toLowerCase() === contract.address && l.topics[0] === topic,
      );
      if (!log) throw new Error(`receipt ${receipt.transactionHash} has no ${s.event} log`);
      used.add(log);
      const fam = FAMILIES[contract.name];
      return {
        id: `ethereum-${receipt.transactionHash.toLowerCase()}-${log.logIndex}`,
        configKey: configKey(
          fam.stablecoinId,
          "ethereum",
          contract.address,
          s.purpose === "freeze" ? fam.freeze : fam.supply,
        ),
        stablecoinId: fam.stablecoinId,
        kind: s.kind,
        address: s.address.toLowerCase(),
        amount_raw: s.amount.toString(),
        amount_source: s.source,
        event_name: s.event,
        tx_hash: receipt.transactionHash.toLowerCase(),
        log_index: Number(log.logIndex),
        block_number: Number(receipt.blockNumber),
      };
    });
  };
  return { rpcUrl: anvil.rpcUrl, anvil, publicClient, walletClient, owner, contracts, send, expectFrom };
}

/**
 * Starts anvil, deploys the three fixture tokens and drives a fixed history through them, tracking
 * every holder's balance itself, so each expected amount is what the test sent or the balance it
 * built up before the event:
 *
 * - USDT-like (6 dec): issue 1,000,000 USDT → transfer 250 to alice → AddedBlackList(alice)
 *   [250 USDT at block−1] → DestroyedBlackFunds(alice, 250) → AddedBlackList(bob) [0] → transfer 5
 *   to carol → AddedBlackList(carol) [5] → RemovedBlackList(carol) [5] → Redeem 100,000.
 * - USDC-like (6 dec): mint 1.5 to alice → mint 2^60+7 units to owner → transfer 0.01 to dave
 *   (ordinary, not tracked) → Blacklisted(alice) [1.5] → UnBlacklisted(alice) [1.5] →
 *   Blacklisted(dave) [0.01] → burn 1 (Transfer to zero).
 * - USDP-like (18 dec): SupplyIncreased 123456789.123456789012345678 → transfer 5e18+1 units to erin
 *   → AddressFrozen(erin) [5e18+1] → FrozenAddressWiped(erin) [5e18+1 at block−1] with
 *   SupplyDecreased(erin, 5e18+1) → AddressFrozen(bob) [0] → AddressUnfrozen(bob) [0] → SupplyDecreased 1e18.
 *
 * Returns `{ rpcUrl, anvil, publicClient, walletClient, owner, contracts, registry, configs,
 * expected (20 events), send, expectFrom, stop }` (see AnvilScenario). Always call `stop()`.
 */
export async function startAnvilScenario(): Promise<AnvilScenario> {
  const anvil = await startAnvil();
  try {
    const base = await deployFixtures(anvil);
    const {
      contracts: { usdt, usdc, usdp },
      owner,
      send,
      expectFrom,
    } = base;
    const { alice, bob, carol, dave, erin } = ACTORS;
    const expected: ExpectedEvent[] = [];
    const bal = new Map<string, bigint>();
    const key = (c: DeployedContract, a: string) => `${c.address}:${a.toLowerCase()}`;
    const get = (c: DeployedContract, a: string) => bal.get(key(c, a)) ?? 0n;
    const add = (c: DeployedContract, a: string, v: bigint) => bal.set(key(c, a), get(c, a) + v);
    const step = async (c: DeployedContract, fn: string, args: readonly unknown[], specs: EventSpec[]) => {
      expected.push(...expectFrom(await send(c, fn, args), c, specs));
    };
    const F = "freeze" as const,
      S = "supply" as const;

    // USDT-like
    const issued = 1_000_000_000_000n,
      toAlice = 250_000_000n,
      toCarol = 5_000_000n,
      redeemed = 100_000_000_000n;
    await step(
      usdt,
      "issue",
      [issued],
      [{ event: "Issue", kind: "mint", address: owner, amount: issued, source: "event", purpose: S }],
    );
    add(usdt, owner, issued);
    await step(usdt, "transfer", [alice, toAlice], []);
    add(usdt, owner, -toAlice);
    add(usdt, alice, toAlice);
    await step(
      usdt,
      "addBlackList",
      [alice],
      [
        {
          event: "AddedBlackList",
          kind: "blacklist",
          address: alice,
          amount: get(usdt, alice),
          source: "historical_balance",
          purpose: F,
        },
      ],
    );
    await step(
      usdt,
      "destroyBlackFunds",
      [alice],
      [
        {
          event: "DestroyedBlackFunds",
          kind: "destroy",
          address: alice,
          amount: get(usdt, alice),
          source: "event",
          purpose: F,
        },
      ],
    );
    add(usdt, alice, -get(usdt, alice));
    await step(
      usdt,
      "addBlackList",
      [bob],
      [
        {
          event: "AddedBlackList",
          kind: "blacklist",
          address: bob,
          amount: get(usdt, bob),
          source: "historical_balance",
          purpose: F,
        },
      ],
    );
    await step(usdt, "transfer", [carol, toCarol], []);
    add(usdt, owner, -toCarol);
    add(usdt, carol, toCarol);
    await step(
      usdt,
      "addBlackList",
      [carol],
      [
        {
          event: "AddedBlackList",
          kind: "blacklist",
          address: carol,
          amount: get(usdt, carol),
          source: "historical_balance",
          purpose: F,
        },
      ],
    );
    await step(
      usdt,
      "removeBlackList",
      [carol],
      [
        {
          event: "RemovedBlackList",
          kind: "unblacklist",
          address: carol,
          amount: get(usdt, carol),
          source: "historical_balance",
          purpose: F,
        },
      ],
    );
    await step(
      usdt,
      "redeem",
      [redeemed],
      [{ event: "Redeem", kind: "burn", address: owner, amount: redeemed, source: "event", purpose: S }],
    );
    add(usdt, owner, -redeemed);

    // USDC-like
    const mintAlice = 1_500_000n,
      big = 2n ** 60n + 7n,
      toDave = 10_000n,
      burned = 1_000_000n;
    await step(
      usdc,
      "mint",
      [alice, mintAlice],
      [{ event: "Transfer", kind: "mint", address: alice, amount: mintAlice, source: "event", purpose: S }],
    );
    add(usdc, alice, mintAlice);
    await step(
      usdc,
      "mint",
      [owner, big],
      [{ event: "Transfer", kind: "mint", address: owner, amount: big, source: "event", purpose: S }],
    );
    add(usdc, owner, big);
    await step(usdc, "transfer", [dave, toDave], []);
    add(usdc, owner, -toDave);
    add(usdc, dave, toDave);
    await step(
      usdc,
      "blacklist",
      [alice],
      [
        {
          event: "Blacklisted",
          kind: "blacklist",
          address: alice,
          amount: get(usdc, alice),
          source: "historical_balance",
          purpose: F,
        },
      ],
    );
    await step(
      usdc,
      "unBlacklist",
      [alice],
      [
        {
          event: "UnBlacklisted",
          kind: "unblacklist",
          address: alice,
          amount: get(usdc, alice),
          source: "historical_balance",
          purpose: F,
        },
      ],
    );
    await step(
      usdc,
      "blacklist",
      [dave],
      [
        {
          event: "Blacklisted",
          kind: "blacklist",
          address: dave,
          amount: get(usdc, dave),
          source: "historical_balance",
          purpose: F,
        },
      ],
    );
    await step(
      usdc,
      "burn",
      [burned],
      [{ event: "Transfer", kind: "burn", address: owner, amount: burned, source: "event", purpose: S }],
    );
    add(usdc, owner, -burned);

    // USDP-like (18 decimals, amounts above 2^53)
    const supply = 123_456_789_123_456_789_012_345_678n,
      toErin = 5n * 10n ** 18n + 1n,
      decreased = 10n ** 18n;
    await step(
      usdp,
      "increaseSupply",
      [supply],
      [{ event: "SupplyIncreased", kind: "mint", address: owner, amount: supply, source: "event", purpose: S }],
    );
    add(usdp, owner, supply);
    await step(usdp, "transfer", [erin, toErin], []);
    add(usdp, owner, -toErin);
    add(usdp, erin, toErin);
    await step(
      usdp,
      "freeze",
      [erin],
      [
        {
          event: "AddressFrozen",
          kind: "blacklist",
          address: erin,
          amount: get(usdp, erin),
          source: "historical_balance",
          purpose: F,
        },
      ],
    );
    await step(
      usdp,
      "wipeFrozenAddress",
      [erin],
      [
        {
          event: "FrozenAddressWiped",
          kind: "destroy",
          address: erin,
          amount: get(usdp, erin),
          source: "historical_balance",
          purpose: F,
        },
        { event: "SupplyDecreased", kind: "burn", address: erin, amount: get(usdp, erin), source: "event", purpose: S },
      ],
    );
    add(usdp, erin, -get(usdp, erin));
    await step(
      usdp,
      "freeze",
      [bob],
      [
        {
          event: "AddressFrozen",
          kind: "blacklist",
          address: bob,
          amount: get(usdp, bob),
          source: "historical_balance",
          purpose: F,
        },
      ],
    );
    await step(
      usdp,
      "unfreeze",
      [bob],
      [
        {
          event: "AddressUnfrozen",
          kind: "unblacklist",
          address: bob,
          amount: get(usdp, bob),
          source: "historical_balance",
          purpose: F,
        },
      ],
    );
    await step(
      usdp,
      "decreaseSupply",
      [decreased],
      [{ event: "SupplyDecreased", kind: "burn", address: owner, amount: decreased, source: "event", purpose: S }],
    );
    add(usdp, owner, -decreased);

    const registry = scenarioRegistry([usdt, usdc, usdp]);
    return { ...base, registry, configs: trackedConfigs(registry), expected, stop: () => anvil.stop() };
  } catch (err) {
    await anvil.stop();
    throw err;
  }
}

/** The fields ledger rows are compared on: `{ id, config_key, kind, address, amount_raw, amount_source }`, sorted by id. */
export interface RowView {
  id: string;
  config_key: string;
  kind: string;
  address: string;
  amount_raw: string | null;
  amount_source: string;
}

/** Projects ledger rows (OnchainEventRow-like) to RowView, sorted by id, for exact set comparison. */
export function rowView(
  rows: readonly {
    id: string;
    config_key: string;
    kind: string;
    address: string;
    amount_raw: string | null;
    amount_source: string;
  }[],
): RowView[] {
  return rows
    .map((r) => ({
      id: r.id,
      config_key: r.config_key,
      kind: r.kind,
      address: r.address,
      amount_raw: r.amount_raw,
      amount_source: r.amount_source,
    }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Projects scenario expectations to RowView, sorted by id. */
export function expectedView(expected: readonly ExpectedEvent[]): RowView[] {
  return rowView(expected.map((e) => ({ ...e, config_key: e.configKey })));
}
