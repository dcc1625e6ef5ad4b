import { type Hex, decodeAbiParameters, hexToBigInt, isHex, size, sliceHex } from "viem";
import type { FamilyEvent } from "../registry/schema.ts";
import { type OnchainEventRow, OnchainEventRowSchema, onchainEventId } from "./contract.ts";
import type { TrackedConfig } from "./tracked.ts";

/**
 * Decoding of raw EVM logs of a tracked config (pipelines/onchain/tracked.ts) into on-chain event
 * rows (pipelines/onchain/contract.ts), for every family of the registry's `eventFamilies`.
 *
 * Where the affected address sits, in this order:
 *   1. `addressArrayData`: `data` is an ABI-encoded `address[]` → one row per element;
 *   2. `addressTopicIndex` set → `topics[addressTopicIndex]`;
 *   3. `addressDataIndex` set → 32-byte data word `addressDataIndex`;
 *   4. the log has indexed arguments (`topics.length > 1`) → `topics[1]`;
 *   5. `topics.length == 1` and the signature has an `address` argument → the data word at that
 *      argument's position (legacy USDT `AddedBlackList(address)` carries it non-indexed: word 0);
 *   6. the signature has no address at all (USDT `Issue(uint256)` / `Redeem(uint256)`, which credit or
 *      debit the owner) → the transaction sender, else the contract address.
 * ERC-20 `Transfer` (family kind `transfer`): from/to are topics 1/2 (or data words 0/1 when not
 * indexed); a mint when from is the zero address (address = to), a burn when to is (address = from);
 * any other transfer is `ignored` (not unknown).
 *
 * Amount (base units, exact BigInt → decimal string), when the family event `hasAmount`:
 * `topics[amountTopicIndex]`, else data word `amountDataIndex`, else the first word after a
 * data-carried address (`DestroyedBlackFunds(address,uint256)`: word 1), else data word 0. Such rows
 * are amount_source `event`, status `resolved`. Freeze-family events without an amount (blacklist,
 * unblacklist, a wipe without amount) come out with amount_raw null, source `unavailable`, status
 * `recoverable_pending` and `needsBalanceRead: true`: ingestion resolves them with `balanceOf` at
 * block − 1 (pipelines/onchain/ingest.ts).
 *
 * Ids: `{chainId}-{txHash}-{logIndex}` (spec 2.5). An `address[]` log yields several rows; the first
 * keeps that id and element i > 0 gets `{chainId}-{txHash}-{logIndex}-{i}` (see `arrayEventId`).
 * Addresses and hashes are lowercased.
 */

/** The fields of a viem `Log` the decoder reads (a `Log` from viem's getLogs/formatLog fits). */
export interface RawLog {
  address: string;
  topics: readonly Hex[] | readonly [];
  data: Hex;
  blockNumber: bigint | null;
  blockHash: Hex | null;
  transactionHash: Hex | null;
  logIndex: number | null;
  removed: boolean;
}

/** Per-log facts the decoder cannot read from the log itself. */
export interface DecodeContext {
  /** Block time, Unix s (from the block header). */
  ts: number;
  /** Lowercase transaction sender; needed only for events without an address argument (see `needsTxFrom`), else null. */
  txFrom: string | null;
}

/** One decoded row, plus whether its amount still has to be read as a balance at block − 1. */
export interface DecodedEvent {
  row: OnchainEventRow;
  needsBalanceRead: boolean;
}

/**
 * Result of decoding one log: rows (one, or several for an `address[]` log), an ERC-20 transfer that
 * is neither mint nor burn (`ignored`), a topic0 the config's family does not declare
 * (`unknown-topic`: not a row, to be counted), or a log whose layout does not match its declared
 * event (`malformed`: data too short, an address word with high bits set, a missing topic …).
 */
export type DecodeResult =
  | { status: "rows"; events: DecodedEvent[] }
  | { status: "ignored"; reason: "transfer-not-mint-or-burn" }
  | { status: "unknown-topic"; topic0: string | null }
  | { status: "malformed"; topic0: string; reason: string };

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

/** Id of element `i` of an `address[]` log: i = 0 → `{chainId}-{txHash}-{logIndex}`; i > 0 → `{chainId}-{txHash}-{logIndex}-{i}` (unique; the spec's id with the element appended). */
export function arrayEventId(chainId: string, txHash: string, logIndex: number, i: number): string {
  return i === 0 ? onchainEventId(chainId, txHash, logIndex) : `${onchainEventId(chainId, txHash, logIndex)}-${i}`;
}

/** Argument types of a canonical signature, e.g. `Seize(address,address,uint256,string)` → 4 types. */
function argTypes(signature: string): string[] {
  const inner = signature.slice(signature.indexOf("(") + 1, -1);
  return inner === "" ? [] : inner.split(",");
}

/** Event name of a canonical signature (`AddedBlackList(address)` → `AddedBlackList`). */
export function eventName(signature: string): string {
  return signature.slice(0, signature.indexOf("("));
}

/** The family event of a config a log belongs to (by topic0), or undefined. */
export function familyEventOf(config: TrackedConfig, log: Pick<RawLog, "topics">): FamilyEvent | undefined {
  const t0 = log.topics[0]?.toLowerCase();
  return t0 === undefined ? undefined : config.events.find((e) => e.topic0 === t0);
}

/** True when the log's event carries no address at all (USDT Issue/Redeem), so the decoder needs the transaction sender. */
export function needsTxFrom(config: TrackedConfig, log: Pick<RawLog, "topics">): boolean {
  const ev = familyEventOf(config, log);
  return (
    !!ev &&
    ev.kind !== "transfer" &&
    !ev.addressArrayData &&
    ev.addressTopicIndex === undefined &&
    ev.addressDataIndex === undefined &&
    !argTypes(ev.signature).includes("address")
  );
}

class Malformed extends Error {}

function word(data: Hex, i: number): Hex {
  if (size(data) < 32 * (i + 1)) throw new Malformed(`data-word-${i}-missing`);
  return sliceHex(data, 32 * i, 32 * (i + 1), { strict: true });
}

function topic(log: RawLog, i: number): Hex {
  const t = log.topics[i];
  if (!t || !isHex(t) || size(t) !== 32) throw new Malformed(`topic-${i}-missing`);
  return t;
}

function asAddress(w: Hex, where: string): string {
  const lower = w.toLowerCase();
  if (!/^0x0{24}[0-9a-f]{40}$/.test(lower)) throw new Malformed(`${where}-not-an-address`);
  return `0x${lower.slice(26)}`;
}

/**
 * Decodes one raw log of `config` into rows. Pure: block time and (when `needsTxFrom`) the
 * transaction sender come in `ctx`. Never throws for a bad log (it is reported `malformed`); throws
 * only when the config itself is unusable (no address / decimals: an unsupported config) or when a
 * built row fails OnchainEventRowSchema (a bug).
 */
export function decodeLog(config: TrackedConfig, log: RawLog, ctx: DecodeContext): DecodeResult {
  if (config.address === null || config.decimals === null)
    throw new Error(`decodeLog: config ${config.configKey} is unsupported (${config.unsupportedReason})`);
  const t0 = log.topics[0]?.toLowerCase() ?? null;
  const ev = t0 === null ? undefined : config.events.find((e) => e.topic0 === t0);
  if (!ev || t0 === null) return { status: "unknown-topic", topic0: t0 };
  try {
    if (log.blockNumber === null || log.transactionHash === null || log.logIndex === null || !isHex(log.data))
      throw new Malformed("log-fields-missing");
    if (!/^0x[0-9a-fA-F]{64}$/.test(log.transactionHash)) throw new Malformed("tx-hash-invalid");
    const types = argTypes(ev.signature);
    let kind: OnchainEventRow["kind"];
    let addresses: string[];
    let amount: bigint | null = null;
    if (ev.kind === "transfer") {
      let from: string, to: string;
      if (log.topics.length >= 3) {
        from = asAddress(topic(log, 1), "topic-1");
        to = asAddress(topic(log, 2), "topic-2");
        amount = hexToBigInt(
          ev.amountTopicIndex !== undefined ? topic(log, ev.amountTopicIndex) : word(log.data, ev.amountDataIndex ?? 0),
        );
      } else if (log.topics.length === 1) {
        from = asAddress(word(log.data, 0), "data-word-0");
        to = asAddress(word(log.data, 1), "data-word-1");
        amount = hexToBigInt(word(log.data, 2));
      } else throw new Malformed("transfer-topics-unexpected");
      if (from === ZERO_ADDRESS) {
        kind = "mint";
        addresses = [to];
      } else if (to === ZERO_ADDRESS) {
        kind = "burn";
        addresses = [from];
      } else return { status: "ignored", reason: "transfer-not-mint-or-burn" };
    } else {
      kind = ev.kind;
      let dataAddressWord: number | null = null;
      if (ev.addressArrayData) {
        try {
          const [list] = decodeAbiParameters([{ type: "address[]" }], log.data);
          addresses = list.map((a) => a.toLowerCase());
        } catch {
          throw new Malformed("address-array-undecodable");
        }
        if (addresses.length === 0) throw new Malformed("address-array-empty");
      } else if (ev.addressTopicIndex !== undefined) {
        addresses = [asAddress(topic(log, ev.addressTopicIndex), `topic-${ev.addressTopicIndex}`)];
      } else if (ev.addressDataIndex !== undefined) {
        dataAddressWord = ev.addressDataIndex;
        addresses = [asAddress(word(log.data, dataAddressWord), `data-word-${dataAddressWord}`)];
      } else if (log.topics.length > 1) {
        addresses = [asAddress(topic(log, 1), "topic-1")];
      } else if (types.includes("address")) {
        dataAddressWord = types.indexOf("address");
        addresses = [asAddress(word(log.data, dataAddressWord), `data-word-${dataAddressWord}`)];
      } else {
        addresses = [(ctx.txFrom ?? config.address).toLowerCase()];
      }
      if (ev.hasAmount) {
        const w =
          ev.amountTopicIndex !== undefined
            ? topic(log, ev.amountTopicIndex)
            : word(log.data, ev.amountDataIndex ?? (dataAddressWord !== null ? dataAddressWord + 1 : 0));
        amount = hexToBigInt(w);
      }
    }
    const chainId = config.chain;
    const txHash = log.transactionHash.toLowerCase();
    const resolved = amount !== null;
    const freezeKind = kind === "blacklist" || kind === "unblacklist" || kind === "destroy";
    const events = addresses.map((address, i): DecodedEvent => {
      const row: OnchainEventRow = {
        id: arrayEventId(chainId, txHash, log.logIndex as number, i),
        chain_id: chainId,
        stablecoin_id: config.stablecoinId,
        config_key: config.configKey,
        contract_address: (config.address as string).toLowerCase(),
        family: config.family,
        event_name: eventName(ev.signature),
        event_signature: ev.signature,
        topic0: ev.topic0,
        kind,
        address,
        amount_raw: resolved ? (amount as bigint).toString() : null,
        decimals: config.decimals as number,
        amount_source: resolved ? "event" : "unavailable",
        amount_status: resolved ? "resolved" : "recoverable_pending",
        tx_hash: txHash,
        tx_from: ctx.txFrom ? ctx.txFrom.toLowerCase() : null,
        block_number: Number(log.blockNumber),
        block_hash: log.blockHash ? log.blockHash.toLowerCase() : null,
        log_index: log.logIndex as number,
        ts: ctx.ts,
        origin: "live",
      };
      return { row: OnchainEventRowSchema.parse(row), needsBalanceRead: !resolved && freezeKind };
    });
    return { status: "rows", events };
  } catch (err) {
    if (err instanceof Malformed) return { status: "malformed", topic0: t0, reason: err.message };
    throw err;
  }
}

/** A block header as ingestion needs it: number, lowercase hash, time (Unix s). */
export interface BlockHeader {
  number: bigint;
  hash: string;
  timestamp: number;
}

/** The chain reads decoding needs (implemented by EvmRpc, pipelines/sources/evm-rpc.ts). */
export interface ChainReader {
  /** Header of block `blockNumber` on `chain`; null when no provider has the block. Throws when every provider fails. */
  blockHeader(chain: string, blockNumber: bigint): Promise<BlockHeader | null>;
  /** Lowercase sender of transaction `txHash`. Throws when every provider fails or the transaction is unknown. */
  transactionFrom(chain: string, txHash: string): Promise<string>;
}

/**
 * Block headers of one chain, fetched once per block number and cached for one sync run. `fresh`
 * bypasses the cache (reorg checks); `clear` drops everything after a reorg.
 */
export class BlockHeaderCache {
  private readonly cache = new Map<bigint, Promise<BlockHeader | null>>();
  constructor(
    private readonly reader: ChainReader,
    readonly chain: string,
  ) {}

  /** Cached header of `blockNumber` (null when the chain has no such block). Throws as ChainReader.blockHeader. */
  get(blockNumber: bigint): Promise<BlockHeader | null> {
    let p = this.cache.get(blockNumber);
    if (!p) {
      p = this.reader.blockHeader(this.chain, blockNumber);
      this.cache.set(blockNumber, p);
      p.catch(() => this.cache.delete(blockNumber));
    }
    return p;
  }

  /** Header of `blockNumber` read now (replaces the cached one). */
  fresh(blockNumber: bigint): Promise<BlockHeader | null> {
    this.cache.delete(blockNumber);
    return this.get(blockNumber);
  }

  clear(): void {
    this.cache.clear();
  }
}

/** Decoded logs of one block range of one config, with what was not a row. */
export interface DecodedBatch {
  events: DecodedEvent[];
  /** Logs whose topic0 the family does not declare, counted by topic0 (`none` for a log without topics). */
  unknownTopics: Map<string, number>;
  /** ERC-20 transfers that are neither mint nor burn. */
  ignored: number;
  malformed: { topic0: string; reason: string; txHash: string | null; logIndex: number | null }[];
  /**
   * Non-null when the range is not consistent with the chain as read now: a `removed: true` log, or a
   * log whose blockHash differs from the current header of its block (a reorg while reading). The
   * caller must roll back and re-read; `events` are then incomplete.
   */
  reorg: string | null;
}

/**
 * Decodes every log of one range of `config`: block times from the (cached) headers, the
 * transaction sender for address-less events, and a consistency check of each log's blockHash
 * against its block's header. Throws when a header or sender read fails on every provider.
 */
export async function decodeLogs(
  config: TrackedConfig,
  logs: readonly RawLog[],
  headers: BlockHeaderCache,
  reader: ChainReader,
): Promise<DecodedBatch> {
  const out: DecodedBatch = { events: [], unknownTopics: new Map(), ignored: 0, malformed: [], reorg: null };
  const removed = logs.find((l) => l.removed);
  if (removed) {
    out.reorg = `removed log ${removed.transactionHash}:${removed.logIndex}`;
    return out;
  }
  const blocks = [...new Set(logs.filter((l) => l.blockNumber !== null).map((l) => l.blockNumber as bigint))];
  const hdr = new Map<bigint, BlockHeader | null>();
  await Promise.all(
    blocks.map(async (b) => {
      hdr.set(b, await headers.get(b));
    }),
  );
  const txs = [
    ...new Set(
      logs
        .filter((l) => l.transactionHash && needsTxFrom(config, l))
        .map((l) => (l.transactionHash as string).toLowerCase()),
    ),
  ];
  const from = new Map<string, string>();
  await Promise.all(
    txs.map(async (t) => {
      from.set(t, (await reader.transactionFrom(config.chain, t)).toLowerCase());
    }),
  );
  for (const log of logs) {
    const h = log.blockNumber === null ? undefined : hdr.get(log.blockNumber);
    if (h === null || (h && log.blockHash && h.hash !== log.blockHash.toLowerCase())) {
      out.reorg = `block ${log.blockNumber} hash ${log.blockHash} is no longer ${h ? h.hash : "on chain"}`;
      return out;
    }
    const res = decodeLog(config, log, {
      ts: h ? h.timestamp : 0,
      txFrom: log.transactionHash ? (from.get(log.transactionHash.toLowerCase()) ?? null) : null,
    });
    if (res.status === "rows") out.events.push(...res.events);
    else if (res.status === "ignored") out.ignored += 1;
    else if (res.status === "unknown-topic") {
      const k = res.topic0 ?? "none";
      out.unknownTopics.set(k, (out.unknownTopics.get(k) ?? 0) + 1);
    } else
      out.malformed.push({
        topic0: res.topic0,
        reason: res.reason,
        txHash: log.transactionHash,
        logIndex: log.logIndex,
      });
  }
  return out;
}
