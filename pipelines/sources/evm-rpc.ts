import pLimit, { type LimitFunction } from "p-limit";
import {
  type Abi,
  type Hex,
  type Log,
  type PublicClient,
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  createPublicClient,
  formatLog,
  http,
  numberToHex,
  parseAbi,
} from "viem";
import { z } from "zod";
import type { BlockHeader, ChainReader } from "../onchain/decode.ts";
import type { TrackedConfig } from "../onchain/tracked.ts";

/**
 * Live EVM JSON-RPC source (one module per upstream): several providers per chain with failover,
 * p-limit concurrency per provider, a request timeout, a consecutive-failure circuit per provider,
 * and `eth_getLogs` with adaptive range splitting. Clients are viem public clients
 * (`createPublicClient({ transport: http(url, { timeout, retryCount: 0 }) })`); retries are ours.
 *
 * Config from env: `BALLAST_RPC_<CHAIN>` = comma-separated provider URLs, tried in that order
 * (`BALLAST_RPC_ETHEREUM=http://a,http://b`; chain `polygon-zkevm` ↔ `BALLAST_RPC_POLYGON_ZKEVM`);
 * `BALLAST_SAFE_LAG_<CHAIN>` = blocks behind latest that count as final (default: ethereum 12,
 * other chains 64); `BALLAST_RPC_TIMEOUT_MS` (default 20000) and `BALLAST_RPC_CONCURRENCY` (requests in
 * flight per provider, default 4). Provider names in state and logs are `{chain}#{i}:{host}`: URL
 * paths and queries (which often hold API keys) never leave this module.
 *
 * Units: block numbers are bigint; times Unix s; balances base units (bigint).
 */

/** Providers and finality lag of one chain. */
export interface EvmChainRpcConfig {
  /** Provider URLs in failover order (http/https). */
  urls: string[];
  /** Blocks behind latest that count as final (safe head = latest − lag); default DEFAULT_SAFE_LAG. */
  lag?: number;
}

/** Options of an EvmRpc. */
export interface EvmRpcOptions {
  chains: Record<string, EvmChainRpcConfig>;
  /** Per-request timeout, ms (default 20000). */
  timeoutMs?: number;
  /** Requests in flight per provider (default 4). */
  concurrency?: number;
  /** Consecutive failures that open a provider's circuit (default 3). Range-limit answers do not count. */
  failureThreshold?: number;
  /** Clock, ms (default Date.now); lastSuccessAt is recorded in Unix s. */
  now?: () => number;
  /** Structured logger (stderr JSON lines in the CLI); default silent. */
  log?: (level: "info" | "warn" | "error", msg: string, extra?: Record<string, unknown>) => void;
}

/** Circuit state of one provider (same shape as the HTTP sources' circuit, spec 2.8), persisted in the ledger. */
export interface ProviderState {
  /** `{chain}#{index}:{host}`. */
  provider: string;
  state: "closed" | "open";
  consecutiveFailures: number;
  /** Unix s of the last successful call, null when none. */
  lastSuccessAt: number | null;
}

/** Default finality lag in blocks: ethereum 12, every other chain 64 (`BALLAST_SAFE_LAG_<CHAIN>` overrides). */
export const DEFAULT_SAFE_LAG: Readonly<Record<string, number>> = { ethereum: 12 };
const OTHER_CHAIN_LAG = 64;

/** Invalid RPC configuration; `problems` lists every issue found. */
export class RpcConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid RPC configuration: ${problems.join("; ")}`);
    this.name = "RpcConfigError";
  }
}

/** Every provider of a chain failed for one call; `errors` has one message per provider attempt. */
export class RpcUnavailableError extends Error {
  constructor(
    readonly chain: string,
    readonly operation: string,
    readonly errors: string[],
  ) {
    super(`${chain}: ${operation} failed on every provider: ${errors.join(" | ") || "no provider configured"}`);
    this.name = "RpcUnavailableError";
  }
}

/** A provider answered eth_getLogs with something that is not a valid log list for the request (splittable). */
export class MalformedLogsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MalformedLogsError";
  }
}

class ChainIdMismatchError extends Error {}

/** Env var of a chain's provider list: `ethereum` → `BALLAST_RPC_ETHEREUM`. */
export function rpcEnvName(chain: string): string {
  return `BALLAST_RPC_${chain.toUpperCase().replace(/-/g, "_")}`;
}

/**
 * Reads the per-chain RPC config from env (see module doc). Returns `{ chains, timeoutMs,
 * concurrency }`; a chain with no `BALLAST_RPC_<CHAIN>` is absent (its configs are skipped by
 * ingestion). Throws RpcConfigError listing every bad URL, lag or number.
 */
export function rpcOptionsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Pick<EvmRpcOptions, "chains" | "timeoutMs" | "concurrency"> {
  const problems: string[] = [];
  const chains: Record<string, EvmChainRpcConfig> = {};
  for (const [k, v] of Object.entries(env)) {
    const m = /^BALLAST_RPC_([A-Z0-9_]+)$/.exec(k);
    if (!m || v === undefined || m[1] === "TIMEOUT_MS" || m[1] === "CONCURRENCY") continue;
    const chain = m[1].toLowerCase().replace(/_/g, "-");
    const urls = v
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    if (urls.length === 0) problems.push(`${k}: no URL`);
    for (const u of urls) {
      try {
        const p = new URL(u).protocol;
        if (p !== "http:" && p !== "https:") problems.push(`${k}: not an http(s) URL: ${redactUrl(u)}`);
      } catch {
        problems.push(`${k}: not a URL: ${redactUrl(u)}`);
      }
    }
    const lagText = env[`BALLAST_SAFE_LAG_${m[1]}`];
    let lag: number | undefined;
    if (lagText !== undefined) {
      lag = Number(lagText);
      if (!Number.isSafeInteger(lag) || lag < 0)
        problems.push(`BALLAST_SAFE_LAG_${m[1]}: not a non-negative integer: ${lagText}`);
    }
    chains[chain] = { urls, ...(lag !== undefined ? { lag } : {}) };
  }
  const int = (name: string, min: number): number | undefined => {
    const t = env[name];
    if (t === undefined) return undefined;
    const n = Number(t);
    if (!Number.isSafeInteger(n) || n < min) {
      problems.push(`${name}: not an integer ≥ ${min}: ${t}`);
      return undefined;
    }
    return n;
  };
  const timeoutMs = int("BALLAST_RPC_TIMEOUT_MS", 1);
  const concurrency = int("BALLAST_RPC_CONCURRENCY", 1);
  if (problems.length) throw new RpcConfigError(problems);
  return { chains, ...(timeoutMs ? { timeoutMs } : {}), ...(concurrency ? { concurrency } : {}) };
}

function redactUrl(u: string): string {
  try {
    return new URL(u).host || "?";
  } catch {
    return "?";
  }
}

interface Provider {
  name: string;
  chain: string;
  client: PublicClient;
  limit: LimitFunction;
  state: ProviderState;
  /** EVM chain id this provider was verified to serve (null: not yet checked). */
  verifiedChainId: number | null;
}

/** Messages of an error and its causes (viem wraps RPC errors; the provider's text is in `details`). */
function errorTexts(err: unknown): { text: string; codes: number[] } {
  const parts: string[] = [];
  const codes: number[] = [];
  let e: unknown = err;
  for (let depth = 0; e && depth < 8; depth++) {
    const o = e as {
      message?: unknown;
      details?: unknown;
      shortMessage?: unknown;
      code?: unknown;
      cause?: unknown;
      name?: unknown;
    };
    for (const t of [o.name, o.message, o.details, o.shortMessage]) if (typeof t === "string") parts.push(t);
    if (typeof o.code === "number") codes.push(o.code);
    e = o.cause;
  }
  return { text: parts.join(" | "), codes };
}

const RANGE_LIMIT =
  /query returned more than|block range|range (is )?too (large|wide|big)|limit exceeded|too many (results|logs|blocks)|exceeds? (the )?(max|limit)|response size|max results|returned too many|log response size|limited to a \d+/i;

const RATE_LIMIT =
  /rate.?limit|too many requests|request rate|daily request count|exceeded .*(credits|quota|capacity)|\b429\b/i;

/**
 * True for an answer meaning "ask for fewer blocks" (range/result limits, code -32005). Rate limiting
 * (which some providers also send as -32005 / "limit exceeded") is NOT a range limit: it counts as a
 * provider failure and moves the call to the next provider. Range-limit answers do not count against
 * a provider's circuit.
 */
export function isRangeLimitError(err: unknown): boolean {
  const { text, codes } = errorTexts(err);
  if (RATE_LIMIT.test(text)) return false;
  return codes.includes(-32005) || RANGE_LIMIT.test(text);
}

/** True for a timeout (viem TimeoutError or a timed-out fetch). */
export function isTimeoutError(err: unknown): boolean {
  const { text } = errorTexts(err);
  return /TimeoutError|timed out|took too long|aborted due to timeout/i.test(text);
}

/** Splits a single getLogs call may make for timeouts / malformed answers (range-limit answers split without limit). */
const FAULT_SPLIT_BUDGET = 64;

/**
 * Whether eth_getLogs should be retried on two half ranges after `err`: always for a range-limit
 * answer; for a timeout or a malformed log list only while the call's fault-split budget lasts (a
 * provider that answers every range badly must not be asked 2 × 50,000 times).
 */
function shouldSplit(err: unknown, budget: { left: number }): boolean {
  if (isRangeLimitError(err)) return true;
  if (!(isTimeoutError(err) || err instanceof MalformedLogsError) || budget.left <= 0) return false;
  budget.left -= 1;
  return true;
}

function shortError(p: Provider, err: unknown): string {
  const msg = err instanceof BaseError ? err.shortMessage : err instanceof Error ? err.message : String(err);
  return `${p.name}: ${msg.split("\n")[0].slice(0, 300)}`;
}

const HEX = /^0x[0-9a-fA-F]*$/;
const RpcLogSchema = z
  .object({
    address: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
    topics: z.array(z.string().regex(/^0x[0-9a-fA-F]{64}$/)).max(4),
    data: z
      .string()
      .regex(HEX)
      .refine((d) => d.length % 2 === 0, "odd-length data"),
    blockNumber: z.string().regex(/^0x[0-9a-fA-F]+$/),
    blockHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
    transactionHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
    logIndex: z.string().regex(/^0x[0-9a-fA-F]+$/),
    removed: z.boolean().optional(),
  })
  .passthrough();

/** One eth_getLogs filter: contract address and topic positions (null = any; an array = OR). */
export interface LogFilter {
  address: string;
  topics: (Hex[] | Hex | null)[];
}

const ZERO_TOPIC = `0x${"0".repeat(64)}` as Hex;

/**
 * eth_getLogs filters of a config: one for every non-transfer event (topic0 OR-list), plus, when the
 * family has an ERC-20 Transfer, one for mints (topics[1] = zero) and one for burns (topics[2] =
 * zero), so ordinary transfers are never fetched.
 */
export function logFilters(config: TrackedConfig): LogFilter[] {
  if (!config.address) return [];
  const plain = config.events.filter((e) => e.kind !== "transfer").map((e) => e.topic0 as Hex);
  const transfer = config.events.filter((e) => e.kind === "transfer").map((e) => e.topic0 as Hex);
  const out: LogFilter[] = [];
  if (plain.length) out.push({ address: config.address, topics: [[...new Set(plain)]] });
  if (transfer.length) {
    out.push({ address: config.address, topics: [transfer, ZERO_TOPIC] });
    out.push({ address: config.address, topics: [transfer, null, ZERO_TOPIC] });
  }
  return out;
}

const BALANCE_OF_ABI = parseAbi(["function balanceOf(address) view returns (uint256)"]);

/**
 * Multi-provider EVM JSON-RPC client (see module doc). Every call goes through `withFailover`:
 * providers with a closed circuit first, in configured order, then open ones as a last resort; each
 * call runs under its provider's p-limit; a provider is checked once to serve the expected EVM chain
 * id (`expectChainId`). Implements ChainReader for decoding.
 */
export class EvmRpc implements ChainReader {
  private readonly providers = new Map<string, Provider[]>();
  private readonly lags = new Map<string, number>();
  private readonly expectedChainIds = new Map<string, number>();
  private readonly now: () => number;
  private readonly threshold: number;
  private readonly log: NonNullable<EvmRpcOptions["log"]>;
  /** Counters since construction: requests sent, eth_getLogs range splits, calls that moved to another provider. */
  readonly stats = { requests: 0, splits: 0, failovers: 0 };

  constructor(opts: EvmRpcOptions) {
    this.now = opts.now ?? Date.now;
    this.threshold = opts.failureThreshold ?? 3;
    this.log = opts.log ?? (() => {});
    const timeout = opts.timeoutMs ?? 20_000;
    for (const [chain, cfg] of Object.entries(opts.chains)) {
      this.lags.set(chain, cfg.lag ?? DEFAULT_SAFE_LAG[chain] ?? OTHER_CHAIN_LAG);
      this.providers.set(
        chain,
        cfg.urls.map((url, i) => {
          const host = redactUrl(url);
          return {
            name: `${chain}#${i}:${host}`,
            chain,
            client: createPublicClient({
              transport: http(url, { timeout, retryCount: 0 }),
              cacheTime: 0,
            }) as PublicClient,
            limit: pLimit(opts.concurrency ?? 4),
            state: { provider: `${chain}#${i}:${host}`, state: "closed", consecutiveFailures: 0, lastSuccessAt: null },
            verifiedChainId: null,
          };
        }),
      );
    }
  }

  /** An EvmRpc from `rpcOptionsFromEnv(env)` merged with `overrides`. Throws RpcConfigError. */
  static fromEnv(env: NodeJS.ProcessEnv = process.env, overrides: Partial<EvmRpcOptions> = {}): EvmRpc {
    return new EvmRpc({ ...rpcOptionsFromEnv(env), ...overrides });
  }

  /** True when at least one provider is configured for `chain`. */
  hasChain(chain: string): boolean {
    return (this.providers.get(chain)?.length ?? 0) > 0;
  }

  /** Chains with providers. */
  chains(): string[] {
    return [...this.providers.keys()].filter((c) => this.hasChain(c)).sort();
  }

  /** Finality lag of `chain` in blocks. */
  lag(chain: string): number {
    return this.lags.get(chain) ?? DEFAULT_SAFE_LAG[chain] ?? OTHER_CHAIN_LAG;
  }

  /**
   * Declares the EVM chain id `chain`'s providers must serve (e.g. 1 for `ethereum`). Each provider is
   * then checked once with eth_chainId before its first call; a mismatch fails that provider (failover).
   */
  expectChainId(chain: string, evmChainId: number | null): void {
    if (evmChainId !== null) this.expectedChainIds.set(chain, evmChainId);
  }

  /** Circuit state of every provider (copies), sorted by provider name. */
  providerStates(): ProviderState[] {
    return [...this.providers.values()]
      .flat()
      .map((p) => ({ ...p.state }))
      .sort((a, b) => (a.provider < b.provider ? -1 : 1));
  }

  private candidates(chain: string): Provider[] {
    const list = this.providers.get(chain) ?? [];
    return [...list.filter((p) => p.state.state === "closed"), ...list.filter((p) => p.state.state === "open")];
  }

  private success(p: Provider): void {
    p.state = {
      provider: p.name,
      state: "closed",
      consecutiveFailures: 0,
      lastSuccessAt: Math.floor(this.now() / 1000),
    };
  }

  private failure(p: Provider, err: unknown): void {
    p.state.consecutiveFailures += 1;
    if (p.state.consecutiveFailures >= this.threshold && p.state.state === "closed") {
      p.state.state = "open";
      this.log("warn", "rpc provider circuit opened", {
        provider: p.name,
        consecutiveFailures: p.state.consecutiveFailures,
        error: shortError(p, err),
      });
    }
  }

  /** Runs `fn` on provider `p` under its concurrency limit, recording the outcome in its circuit. */
  private call<T>(p: Provider, fn: (client: PublicClient) => Promise<T>): Promise<T> {
    return p.limit(async () => {
      try {
        const expected = this.expectedChainIds.get(p.chain);
        if (expected !== undefined && p.verifiedChainId !== expected) {
          this.stats.requests += 1;
          const id = await p.client.getChainId();
          if (id !== expected) throw new ChainIdMismatchError(`serves EVM chain ${id}, expected ${expected}`);
          p.verifiedChainId = id;
        }
        this.stats.requests += 1;
        const out = await fn(p.client);
        this.success(p);
        return out;
      } catch (err) {
        if (isRangeLimitError(err)) this.success(p);
        else this.failure(p, err);
        throw err;
      }
    });
  }

  /** Runs `fn` on each candidate provider of `chain` until one succeeds. Throws RpcUnavailableError with every provider's error. */
  private async withFailover<T>(
    chain: string,
    operation: string,
    fn: (client: PublicClient) => Promise<T>,
  ): Promise<T> {
    const errors: string[] = [];
    const list = this.candidates(chain);
    for (const [i, p] of list.entries()) {
      try {
        const out = await this.call(p, fn);
        if (i > 0) this.stats.failovers += 1;
        return out;
      } catch (err) {
        errors.push(shortError(p, err));
        if (i + 1 < list.length)
          this.log("warn", "rpc provider failed, trying next", {
            operation,
            provider: p.name,
            error: shortError(p, err),
          });
      }
    }
    throw new RpcUnavailableError(chain, operation, errors);
  }

  /** Latest block number of `chain` (first healthy provider). Throws RpcUnavailableError. */
  async latestBlock(chain: string): Promise<bigint> {
    return this.withFailover(chain, "eth_blockNumber", (c) => c.getBlockNumber({ cacheTime: 0 }));
  }

  /** Safe head of `chain`: latest − lag (never below 0). Throws RpcUnavailableError. */
  async safeHead(chain: string): Promise<bigint> {
    const latest = await this.latestBlock(chain);
    const safe = latest - BigInt(this.lag(chain));
    return safe < 0n ? 0n : safe;
  }

  /**
   * Header of block `blockNumber` (lowercase hash, Unix s). Null when the providers that answered do
   * not have the block (e.g. it was reorged away); a provider that errs passes the call to the next.
   * Throws RpcUnavailableError when every provider errs.
   */
  async blockHeader(chain: string, blockNumber: bigint): Promise<BlockHeader | null> {
    const errors: string[] = [];
    let answeredNull = false;
    for (const p of this.candidates(chain)) {
      try {
        const b = await this.call(p, (c) =>
          c.request({ method: "eth_getBlockByNumber", params: [numberToHex(blockNumber), false] }),
        );
        if (!b) {
          answeredNull = true;
          continue;
        }
        if (typeof b.hash !== "string" || typeof b.timestamp !== "string") throw new Error("malformed block header");
        return { number: blockNumber, hash: b.hash.toLowerCase(), timestamp: Number(BigInt(b.timestamp)) };
      } catch (err) {
        errors.push(shortError(p, err));
      }
    }
    if (answeredNull) return null;
    throw new RpcUnavailableError(chain, `eth_getBlockByNumber ${blockNumber}`, errors);
  }

  /** Lowercase sender of `txHash`. Throws RpcUnavailableError (also when no provider knows the transaction). */
  async transactionFrom(chain: string, txHash: string): Promise<string> {
    return this.withFailover(chain, "eth_getTransactionByHash", async (c) => {
      const tx = await c.getTransaction({ hash: txHash as Hex });
      return tx.from.toLowerCase();
    });
  }

  /**
   * `balanceOf(holder)` of ERC-20 `token` at `blockNumber` (latest when omitted), base units. An
   * archive read: providers that prune state fail and the next one is tried. Throws
   * RpcUnavailableError when every provider fails — callers record `provider_failed`, never zero.
   */
  async balanceOf(chain: string, token: string, holder: string, blockNumber?: bigint): Promise<bigint> {
    return this.withFailover(chain, "balanceOf", (c) =>
      c.readContract({
        address: token as Hex,
        abi: BALANCE_OF_ABI,
        functionName: "balanceOf",
        args: [holder as Hex],
        ...(blockNumber !== undefined ? { blockNumber } : {}),
      }),
    );
  }

  /**
   * `eth_getStorageAt(address, slot, blockNumber)`: the 32-byte word (lowercase 0x-hex, 66 chars).
   * Throws RpcUnavailableError when every provider fails (a malformed answer counts as a failure).
   */
  async storageAt(chain: string, address: string, slot: Hex, blockNumber: bigint): Promise<Hex> {
    return this.withFailover(chain, "eth_getStorageAt", async (c) => {
      const word = await c.getStorageAt({ address: address as Hex, slot, blockNumber });
      if (typeof word !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(word))
        throw new Error(`malformed storage word: ${String(word).slice(0, 80)}`);
      return word.toLowerCase() as Hex;
    });
  }

  /**
   * A view call through viem `readContract` at `blockNumber`, telling a contract answer from a
   * provider failure: `{ outcome: "answered", result }` when the function returned; `{ outcome:
   * "reverted", reason }` when the call executed and reverted or returned no data (e.g. the function
   * does not exist in the implementation) — an answer of the chain, which does not count against the
   * provider. Any other error (transport, timeout, HTTP) moves to the next provider; throws
   * RpcUnavailableError when every provider fails.
   */
  async tryReadContract<T>(
    chain: string,
    params: { address: string; abi: Abi; functionName: string; args?: readonly unknown[]; blockNumber: bigint },
  ): Promise<{ outcome: "answered"; result: T } | { outcome: "reverted"; reason: string }> {
    return this.withFailover(chain, `eth_call ${params.functionName}`, async (c) => {
      try {
        const result = await c.readContract({
          address: params.address as Hex,
          abi: params.abi,
          functionName: params.functionName,
          args: params.args,
          blockNumber: params.blockNumber,
        } as Parameters<PublicClient["readContract"]>[0]);
        return { outcome: "answered" as const, result: result as T };
      } catch (err) {
        const reason = revertReason(err);
        if (reason === null) throw err;
        return { outcome: "reverted" as const, reason };
      }
    });
  }

  /**
   * Logs of `config` in blocks [fromBlock, toBlock] (inclusive), sorted by (blockNumber, logIndex),
   * deduplicated by (transactionHash, logIndex). One request per filter (`logFilters`); a request
   * answered with a range/result limit, a timeout or a malformed log list is retried as two half
   * ranges, recursively down to single blocks (timeouts and malformed answers: at most 64 splits per
   * call); a provider failing a request that is not split further passes it to the next provider. Throws RpcUnavailableError when a range fails everywhere.
   */
  async getLogs(config: TrackedConfig, fromBlock: bigint, toBlock: bigint): Promise<Log[]> {
    if (fromBlock > toBlock) return [];
    const all = (
      await Promise.all(
        logFilters(config).map((f) =>
          this.getLogsSplit(config.chain, f, fromBlock, toBlock, { left: FAULT_SPLIT_BUDGET }),
        ),
      )
    ).flat();
    const seen = new Set<string>();
    const out: Log[] = [];
    for (const l of all) {
      const k = `${l.transactionHash}:${l.logIndex}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push(l);
    }
    return out.sort((a, b) =>
      a.blockNumber === b.blockNumber
        ? (a.logIndex ?? 0) - (b.logIndex ?? 0)
        : (a.blockNumber ?? 0n) < (b.blockNumber ?? 0n)
          ? -1
          : 1,
    );
  }

  private async getLogsSplit(
    chain: string,
    filter: LogFilter,
    from: bigint,
    to: bigint,
    budget: { left: number },
  ): Promise<Log[]> {
    const errors: string[] = [];
    const list = this.candidates(chain);
    for (const [i, p] of list.entries()) {
      try {
        const logs = await this.call(p, (c) => fetchLogs(c, filter, from, to));
        if (i > 0) this.stats.failovers += 1;
        return logs;
      } catch (err) {
        if (from < to && shouldSplit(err, budget)) {
          this.stats.splits += 1;
          const mid = from + (to - from) / 2n;
          this.log("info", "eth_getLogs range split", {
            provider: p.name,
            fromBlock: Number(from),
            toBlock: Number(to),
            reason: shortError(p, err),
          });
          const [a, b] = await Promise.all([
            this.getLogsSplit(chain, filter, from, mid, budget),
            this.getLogsSplit(chain, filter, mid + 1n, to, budget),
          ]);
          return [...a, ...b];
        }
        errors.push(shortError(p, err));
        if (i + 1 < list.length)
          this.log("warn", "rpc provider failed eth_getLogs, trying next", {
            provider: p.name,
            fromBlock: Number(from),
            toBlock: Number(to),
            error: shortError(p, err),
          });
      }
    }
    throw new RpcUnavailableError(chain, `eth_getLogs ${from}-${to}`, errors);
  }
}

/**
 * Why a contract call did not return a value when the chain itself answered: a revert (viem
 * ContractFunctionRevertedError, or a JSON-RPC error carrying "execution reverted" / code 3) or an
 * empty return (ContractFunctionZeroDataError: no such function and a fallback that returns
 * nothing). Null for any other error (transport, timeout, HTTP status, rate limit).
 */
export function revertReason(err: unknown): string | null {
  if (err instanceof BaseError) {
    const hit = err.walk(
      (e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError,
    );
    if (hit instanceof ContractFunctionZeroDataError) return "no data returned";
    if (hit instanceof ContractFunctionRevertedError) return hit.reason ? `reverted: ${hit.reason}` : "reverted";
  }
  const { text, codes } = errorTexts(err);
  if (isTimeoutError(err) || RATE_LIMIT.test(text) || /HttpRequestError|HTTP request failed|fetch failed/i.test(text))
    return null;
  if (codes.includes(3) || /execution reverted/i.test(text)) return "reverted";
  return null;
}

/** One raw eth_getLogs call, validated: every entry a complete log of the filter's address within [from, to]. Throws MalformedLogsError otherwise. */
async function fetchLogs(client: PublicClient, filter: LogFilter, from: bigint, to: bigint): Promise<Log[]> {
  const raw: unknown = await client.request({
    method: "eth_getLogs",
    params: [
      { address: filter.address as Hex, topics: filter.topics, fromBlock: numberToHex(from), toBlock: numberToHex(to) },
    ],
  } as Parameters<PublicClient["request"]>[0]);
  if (!Array.isArray(raw))
    throw new MalformedLogsError(`eth_getLogs returned ${raw === null ? "null" : typeof raw}, not an array`);
  const address = filter.address.toLowerCase();
  return raw.map((entry, i) => {
    const r = RpcLogSchema.safeParse(entry);
    if (!r.success)
      throw new MalformedLogsError(`log ${i}: ${r.error.issues[0]?.path.join(".")} ${r.error.issues[0]?.message}`);
    const bn = BigInt(r.data.blockNumber);
    if (bn < from || bn > to) throw new MalformedLogsError(`log ${i}: block ${bn} outside ${from}-${to}`);
    if (r.data.address.toLowerCase() !== address)
      throw new MalformedLogsError(`log ${i}: address ${r.data.address} is not ${address}`);
    return formatLog({ ...r.data, removed: r.data.removed ?? false } as Parameters<typeof formatLog>[0]);
  });
}
