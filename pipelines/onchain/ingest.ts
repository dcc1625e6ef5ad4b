import pLimit from "p-limit";
import type { EvmRpc } from "../sources/evm-rpc.ts";
import type { OnchainEventRow } from "./contract.ts";
import { BlockHeaderCache, type DecodedBatch, type DecodedEvent, decodeLogs } from "./decode.ts";
import type { LedgerStore } from "./ledger-store.ts";
import type { TrackedConfig } from "./tracked.ts";

/**
 * Live EVM ingestion of tracked configs into the on-chain ledger.
 *
 * Per config: from cursor + 1 (else the config's startBlock, else 0) up to the chain's safe head
 * (latest − lag), in ranges of `chunkSize` blocks. Each range: read logs (EvmRpc.getLogs, adaptive
 * splitting + failover), decode (block headers cached per block), resolve freeze-family amounts the
 * event does not carry with `balanceOf(address)` at block − 1 (amount_source `historical_balance`,
 * status `resolved`; a failed read leaves amount_raw null with status `provider_failed` — never zero —
 * for the remediation job), then commit rows + unknown-topic counts + cursor in ONE ledger
 * transaction. The cursor only ever points at a block fully read.
 *
 * Reorgs: before each range the cursor's stored block hash is compared with the chain's current hash
 * of that block; a mismatch (or a missing block), a `removed: true` log, a log whose block hash is not
 * its block's current hash, or the range's last block changing while it was read, rolls the config
 * back: its rows with block_number > last_block − reorgDepth are deleted, the cursor moves there (with
 * that block's current hash) and the blocks are read again. Reorgs deeper than `reorgDepth` below the
 * cursor are not detected.
 */

/** Largest range (blocks) read in one eth_getLogs pass and committed in one transaction. */
export const MAX_CHUNK_SIZE = 50_000;

/** Options of syncConfig / syncAll. */
export interface SyncOptions {
  /** Blocks per range, 1..50000 (default 50000). */
  chunkSize?: number;
  /** Ranges per config per call (default unlimited); the rest waits for the next call. */
  maxChunks?: number;
  /** Blocks below the cursor rolled back on a detected reorg (default 64). */
  reorgDepth?: number;
  /** Highest block to read (default: the chain's safe head). */
  toBlock?: number;
  /** Configs synced at once by syncAll (default 4); requests are limited per provider by EvmRpc. */
  configConcurrency?: number;
  /** Clock, Unix s (cursor updated_at). */
  nowSec?: () => number;
  /** Structured logger; default silent. */
  log?: (level: "info" | "warn" | "error", msg: string, extra?: Record<string, unknown>) => void;
}

/** Outcome of syncing one config. Block numbers are EVM blocks; `lastBlock` is the cursor after the call (null: none). */
export interface SyncResult {
  configKey: string;
  status: "synced" | "skipped" | "failed";
  /** Why a config was skipped or failed. */
  reason: string | null;
  fromBlock: number | null;
  lastBlock: number | null;
  /** Safe head the call read towards. */
  headBlock: number | null;
  chunks: number;
  /** Rows committed (including rows re-committed after a rollback). */
  rows: number;
  unknownLogs: number;
  ignoredLogs: number;
  malformedLogs: number;
  balanceReads: number;
  balanceFailures: number;
  reorgs: number;
  rolledBackRows: number;
  /** True when the cursor reached the head. */
  caughtUp: boolean;
}

const DEFAULTS = { chunkSize: MAX_CHUNK_SIZE, reorgDepth: 64 };

function emptyResult(configKey: string): SyncResult {
  return {
    configKey,
    status: "synced",
    reason: null,
    fromBlock: null,
    lastBlock: null,
    headBlock: null,
    chunks: 0,
    rows: 0,
    unknownLogs: 0,
    ignoredLogs: 0,
    malformedLogs: 0,
    balanceReads: 0,
    balanceFailures: 0,
    reorgs: 0,
    rolledBackRows: 0,
    caughtUp: false,
  };
}

/** Why a config cannot be synced by EVM ingestion with this RPC, or null when it can. */
export function unsyncableReason(config: TrackedConfig, rpc: Pick<EvmRpc, "hasChain">): string | null {
  if (config.unsupportedReason) return config.unsupportedReason;
  if (config.chain === "tron" || config.evmChainId === null) return "not-an-evm-chain";
  if (!rpc.hasChain(config.chain)) return "no-rpc-configured";
  return null;
}

/** Validated chunk size: integer 1..50000, default 50000. Throws RangeError otherwise. */
export function chunkSizeOf(n: number | undefined): number {
  const v = n ?? MAX_CHUNK_SIZE;
  if (!Number.isSafeInteger(v) || v < 1 || v > MAX_CHUNK_SIZE)
    throw new RangeError(`chunkSize must be an integer in 1..${MAX_CHUNK_SIZE}, got ${n}`);
  return v;
}

/** Rows of one read range, amounts resolved, ready to commit. */
export interface ReadRange {
  rows: OnchainEventRow[];
  unknownTopics: Map<string, number>;
  ignored: number;
  /** Logs of declared topics whose layout did not decode (not rows; logged by syncConfig). */
  malformed: DecodedBatch["malformed"];
  balanceReads: number;
  balanceFailures: number;
  /** Lowercase hash of the range's last block. */
  endHash: string;
  /** Non-null when the chain changed under the read (see module doc): nothing may be committed. */
  reorg: string | null;
}

/**
 * Resolves amounts of freeze-family events that carry none: `balanceOf(address)` at block − 1 on the
 * config's token contract (one read per distinct (address, block)). Success → amount_raw = balance,
 * source `historical_balance`, status `resolved` (zero is a real zero balance). Failure → amount_raw
 * null, source `unavailable`, status `provider_failed`. A block-0 event → `permanently_unavailable`.
 * Returns the rows and the read/failure counts; never throws for a failed read.
 */
export async function resolveBalances(
  rpc: EvmRpc,
  config: TrackedConfig,
  events: DecodedEvent[],
): Promise<{ rows: OnchainEventRow[]; reads: number; failures: number; errors: Map<string, string> }> {
  type Read = { ok: true; value: bigint } | { ok: false; error: string };
  const reads = new Map<string, Promise<Read>>();
  const keyOf = (e: DecodedEvent) => `${e.row.address}@${e.row.block_number - 1}`;
  for (const e of events) {
    if (!e.needsBalanceRead || e.row.block_number < 1 || reads.has(keyOf(e))) continue;
    reads.set(
      keyOf(e),
      rpc.balanceOf(config.chain, config.address as string, e.row.address, BigInt(e.row.block_number - 1)).then(
        (value) => ({ ok: true as const, value }),
        (err: Error) => ({ ok: false as const, error: err.message }),
      ),
    );
  }
  const settled = new Map<string, Read>();
  await Promise.all(
    [...reads].map(async ([k, p]) => {
      settled.set(k, await p);
    }),
  );
  let failures = 0;
  const errors = new Map<string, string>();
  const rows = events.map(({ row, needsBalanceRead }): OnchainEventRow => {
    if (!needsBalanceRead) return row;
    if (row.block_number < 1)
      return { ...row, amount_raw: null, amount_source: "unavailable", amount_status: "permanently_unavailable" };
    const r = settled.get(keyOf({ row, needsBalanceRead }));
    if (r?.ok)
      return { ...row, amount_raw: r.value.toString(), amount_source: "historical_balance", amount_status: "resolved" };
    failures += 1;
    errors.set(row.id, r && !r.ok ? r.error : "no read");
    return { ...row, amount_raw: null, amount_source: "unavailable", amount_status: "provider_failed" };
  });
  return { rows, reads: reads.size, failures, errors };
}

/**
 * Reads blocks [fromBlock, toBlock] of `config`: the last block's hash before and after the log read
 * (the range is consistent only if it did not change), logs, decoding with header checks, balance
 * reads. Throws RpcUnavailableError when a read fails on every provider, or an Error when the last
 * block of the range does not exist.
 */
export async function readRange(
  rpc: EvmRpc,
  config: TrackedConfig,
  fromBlock: number,
  toBlock: number,
  headers: BlockHeaderCache,
): Promise<ReadRange> {
  const end = await headers.fresh(BigInt(toBlock));
  if (!end) throw new Error(`${config.chain}: block ${toBlock} not available`);
  const logs = await rpc.getLogs(config, BigInt(fromBlock), BigInt(toBlock));
  const batch = await decodeLogs(config, logs, headers, rpc);
  const base = {
    unknownTopics: batch.unknownTopics,
    ignored: batch.ignored,
    malformed: batch.malformed,
    endHash: end.hash,
  };
  if (batch.reorg) return { ...base, rows: [], balanceReads: 0, balanceFailures: 0, reorg: batch.reorg };
  const resolved = await resolveBalances(rpc, config, batch.events);
  const endAfter = await headers.fresh(BigInt(toBlock));
  const reorg = !endAfter || endAfter.hash !== end.hash ? `block ${toBlock} changed while the range was read` : null;
  return { ...base, rows: resolved.rows, balanceReads: resolved.reads, balanceFailures: resolved.failures, reorg };
}

/**
 * Syncs one EVM config from its cursor to the safe head (see module doc). Returns a SyncResult;
 * status `skipped` (with reason) for an unsupported / non-EVM / unconfigured config. Throws
 * RpcUnavailableError or a ledger error after committing every range it completed (the cursor
 * marks where the next call resumes); throws RangeError for a bad chunkSize.
 */
export async function syncConfig(
  ledger: LedgerStore,
  rpc: EvmRpc,
  config: TrackedConfig,
  opts: SyncOptions = {},
): Promise<SyncResult> {
  const res = emptyResult(config.configKey);
  const skip = unsyncableReason(config, rpc);
  if (skip) return { ...res, status: "skipped", reason: skip };
  const chunkSize = chunkSizeOf(opts.chunkSize);
  const reorgDepth = opts.reorgDepth ?? DEFAULTS.reorgDepth;
  const maxChunks = opts.maxChunks ?? Number.POSITIVE_INFINITY;
  const now = opts.nowSec ?? (() => Math.floor(Date.now() / 1000));
  const log = opts.log ?? (() => {});
  const start = config.startBlock ?? 0;
  rpc.expectChainId(config.chain, config.evmChainId);
  const headers = new BlockHeaderCache(rpc, config.chain);
  let cursor = await ledger.getCursor(config.configKey);
  let head = opts.toBlock ?? Number(await rpc.safeHead(config.chain));
  res.headBlock = head;
  res.fromBlock = cursor ? cursor.lastBlock + 1 : start;
  let consecutiveReorgs = 0;

  const rollBack = async (why: string) => {
    consecutiveReorgs += 1;
    if (consecutiveReorgs > 5) throw new Error(`${config.configKey}: chain keeps reorganising (${why})`);
    res.reorgs += 1;
    headers.clear();
    // the chain may now be shorter than the head this call started with
    if (opts.toBlock === undefined) res.headBlock = head = Math.min(head, Number(await rpc.safeHead(config.chain)));
    if (!cursor) return;
    const latest = Number(await rpc.latestBlock(config.chain));
    const target = Math.min(Math.max(cursor.lastBlock - reorgDepth, start - 1), latest);
    const h = target >= 0 && target >= start ? await headers.fresh(BigInt(target)) : null;
    const deleted = await ledger.rollback(config.configKey, target >= start ? target : -1, h ? h.hash : null, now());
    res.rolledBackRows += deleted;
    log("warn", "reorg: rolled back", {
      configKey: config.configKey,
      reason: why,
      fromCursor: cursor.lastBlock,
      toBlock: target,
      deletedRows: deleted,
    });
    cursor = await ledger.getCursor(config.configKey);
  };

  for (;;) {
    if (cursor?.lastBlockHash) {
      const current = await headers.fresh(BigInt(cursor.lastBlock));
      if (!current || current.hash !== cursor.lastBlockHash) {
        await rollBack(
          `cursor block ${cursor.lastBlock} hash ${cursor.lastBlockHash} is now ${current ? current.hash : "missing"}`,
        );
        continue;
      }
    }
    const from = cursor ? cursor.lastBlock + 1 : start;
    if (from > head) {
      res.caughtUp = true;
      break;
    }
    if (res.chunks >= maxChunks) break;
    const to = Math.min(from + chunkSize - 1, head);
    const range = await readRange(rpc, config, from, to, headers);
    if (range.reorg) {
      await rollBack(range.reorg);
      continue;
    }
    consecutiveReorgs = 0;
    await ledger.commitRange({
      configKey: config.configKey,
      rows: range.rows,
      cursor: { lastBlock: to, lastBlockHash: range.endHash },
      unknownTopics: range.unknownTopics,
      nowSec: now(),
    });
    cursor = { configKey: config.configKey, lastBlock: to, lastBlockHash: range.endHash, updatedAt: now() };
    res.chunks += 1;
    res.rows += range.rows.length;
    res.unknownLogs += [...range.unknownTopics.values()].reduce((a, b) => a + b, 0);
    res.ignoredLogs += range.ignored;
    res.malformedLogs += range.malformed.length;
    if (range.malformed.length)
      log("warn", "malformed logs skipped", {
        configKey: config.configKey,
        fromBlock: from,
        toBlock: to,
        logs: range.malformed.slice(0, 20),
      });
    res.balanceReads += range.balanceReads;
    res.balanceFailures += range.balanceFailures;
    log("info", "range committed", {
      configKey: config.configKey,
      fromBlock: from,
      toBlock: to,
      rows: range.rows.length,
      balanceFailures: range.balanceFailures,
      malformed: range.malformed.length,
    });
  }
  res.lastBlock = cursor ? cursor.lastBlock : null;
  return res;
}

/**
 * Syncs every config (up to `configConcurrency` at once). Unsupported, Tron and unconfigured-chain
 * configs come back `skipped`; a config whose sync throws comes back `failed` with the error message
 * (the others still run; committed ranges stay). Saves the providers' circuit states to the ledger at
 * the end. Results are in input order.
 */
export async function syncAll(
  ledger: LedgerStore,
  rpc: EvmRpc,
  configs: TrackedConfig[],
  opts: SyncOptions = {},
): Promise<SyncResult[]> {
  chunkSizeOf(opts.chunkSize);
  const limit = pLimit(opts.configConcurrency ?? 4);
  const log = opts.log ?? (() => {});
  const results = await Promise.all(
    configs.map((c) =>
      limit(async () => {
        try {
          return await syncConfig(ledger, rpc, c, opts);
        } catch (err) {
          log("error", "config sync failed", { configKey: c.configKey, error: (err as Error).message });
          return {
            ...emptyResult(c.configKey),
            status: "failed" as const,
            reason: (err as Error).message,
            lastBlock: (await ledger.getCursor(c.configKey))?.lastBlock ?? null,
          };
        }
      }),
    ),
  );
  await ledger.saveProviderStates(rpc.providerStates());
  return results;
}
