import { z } from "zod";
import {
  configKey,
  ONCHAIN_EVENT_COLUMNS,
  type OnchainEventRow,
  OnchainEventRowSchema,
  onchainEventId,
} from "../../onchain/contract.ts";
import { loadRegistry } from "../../registry/registry.ts";
import type { FamilyEvent } from "../../registry/schema.ts";
import { readCsvRows, ReaderDrops } from "../file-formats.ts";
import { RowCollector } from "../parse-helpers.ts";
import { parseTimeLabel } from "../time.ts";
import type { Capture, Endpoint, ReaderOutput, RowSink } from "../types.ts";

/**
 * Decoded on-chain events of tracked contracts (freeze/blacklist and mint/burn families), one row
 * per log (pipelines/onchain/contract.ts). Live rows come from the on-chain ledger the ingestion
 * jobs write (EVM `eth_getLogs`, TronGrid); recorded rows from the readers below, which turn the
 * recorded decoded logs (bhemen USDT, USDP, PYUSD) into the same rows. Payload `{ rows: [...] }`;
 * each row is checked against OnchainEventRowSchema and a bad one is dropped and counted.
 *
 * Time: block time, Unix s (UTC). A log is a public fact from its block on, so a build as of T
 * loads the rows whose block time is at or before T (staging), whatever the recording date.
 */
export const onchainEventsEndpoint: Endpoint = {
  key: "onchain.events",
  source: "onchain",
  lineage: { family: "onchain", derivedFrom: null },
  time: { zone: "UTC", dailyBucket: "block time (Unix s); daily buckets are UTC days of block time" },
  mode: "history",
  maxStalenessSec: Number.POSITIVE_INFINITY,
  payloadSchema: z.object({ rows: z.array(z.unknown()) }),
  rowSchema: OnchainEventRowSchema,
  table: { name: "raw_onchain_events", columns: ONCHAIN_EVENT_COLUMNS },
  toRows(payload: { rows: unknown[] }, _capture: Capture, out?: RowSink) {
    const rc = new RowCollector(OnchainEventRowSchema, out);
    for (const r of payload.rows) {
      if (!r || typeof r !== "object" || Array.isArray(r)) rc.drop("row-not-object");
      else rc.add(r as Record<string, unknown>);
    }
    return rc.result();
  },
};

// ---------------------------------------------------------------------------------------------
// Recorded-file readers.

const ALL_ZEROS = /^0+$/;

/**
 * Exact base units from a recorded amount cell: digits, optionally with a zero fraction (`30000000.0`,
 * as pandas writes integers), or an exponent form that is still an integer (`1.5e+16`). Null when the
 * cell is not an exact non-negative integer (counted by the caller, never rounded).
 */
export function exactBaseUnits(cell: string): string | null {
  const s = cell.trim();
  const m = /^(\d+)(?:\.(\d+))?(?:[eE]\+?(\d+))?$/.exec(s);
  if (!m) return null;
  const [, int, frac = "", exp = "0"] = m;
  const e = Number(exp);
  const digits = int + frac;
  const shift = e - frac.length;
  if (shift < 0) {
    const dropped = digits.slice(digits.length + shift);
    if (!ALL_ZEROS.test(dropped)) return null;
    return BigInt(digits.slice(0, digits.length + shift) || "0").toString();
  }
  return BigInt(digits + "0".repeat(shift)).toString();
}

/** The registry's family event named `name` (e.g. `AddedBlackList`) of `family`, from `families`. */
function familyEvent(families: Record<string, FamilyEvent[]>, family: string, name: string): FamilyEvent | undefined {
  return families[family]?.find((e) => e.signature.startsWith(`${name}(`));
}

interface RecordedLogSpec {
  /** Registry stablecoin id, chain, contract (lowercase) and decimals of the recorded contract. */
  stablecoinId: string;
  chainId: string;
  contract: string;
  decimals: number;
  /** Event name → family key and which CSV columns hold the affected address and the amount. */
  events: Record<string, { family: string; address: string[]; amount?: string }>;
  /** Column names of the recorded file. */
  columns: {
    event: string;
    block: string;
    tx: string;
    logIndex?: string;
    time: string;
    timeKind: "iso-utc" | "unix";
    blockHash?: string;
    txFrom: string;
  };
}

/**
 * Turns a recorded decoded-log CSV into on-chain event rows. Rows of events the spec does not track
 * (role changes, ownership) are counted as `event-not-tracked`; a row with a bad block, hash, time
 * or amount is dropped with its reason. Hashes are lowercased and given a `0x` prefix. When the file
 * has no log index (PYUSD), the row's ordinal among the same transaction's rows in file order stands
 * in for it (documented in the manifest reader notes), so ids stay unique and stable.
 */
function readRecordedLogs(spec: RecordedLogSpec) {
  return (text: string): ReaderOutput => {
    const drops = new ReaderDrops();
    const rows: OnchainEventRow[] = [];
    const ordinal = new Map<string, number>();
    const families = loadRegistry().eventFamilies;
    for (const r of readCsvRows(text, drops)) {
      const name = r[spec.columns.event];
      const ev = spec.events[name];
      if (!ev) {
        drops.drop("event-not-tracked");
        continue;
      }
      const family = familyEvent(families, ev.family, name);
      if (!family) {
        drops.drop("event-family-unknown");
        continue;
      }
      const block = Number(r[spec.columns.block]);
      const hex = (v: string | undefined) => (v ? (v.startsWith("0x") ? v : `0x${v}`).toLowerCase() : "");
      const tx = hex(r[spec.columns.tx]);
      if (!Number.isSafeInteger(block) || block <= 0 || !/^0x[0-9a-f]{64}$/.test(tx)) {
        drops.drop("block-or-tx-invalid");
        continue;
      }
      let ts: number;
      const timeCell = r[spec.columns.time] ?? "";
      if (spec.columns.timeKind === "unix") ts = /^\d+$/.test(timeCell) ? Number(timeCell) : NaN;
      else {
        const label = parseTimeLabel(timeCell, "UTC");
        ts = label && label.kind === "instant" ? Math.floor(label.unixSec) : NaN;
      }
      if (!Number.isFinite(ts) || ts <= 0) {
        drops.drop("timestamp-missing-or-invalid");
        continue;
      }
      let logIndex: number;
      if (spec.columns.logIndex) logIndex = Number(r[spec.columns.logIndex]);
      else {
        logIndex = ordinal.get(tx) ?? 0;
        ordinal.set(tx, logIndex + 1);
      }
      if (!Number.isSafeInteger(logIndex) || logIndex < 0) {
        drops.drop("log-index-invalid");
        continue;
      }
      const address =
        ev.address
          .map((c) => r[c])
          .find((v) => v && /^0x[0-9a-fA-F]{40}$/.test(v))
          ?.toLowerCase() ?? spec.contract;
      let amount: string | null = null;
      if (ev.amount) {
        amount = exactBaseUnits(r[ev.amount] ?? "");
        if (amount === null) {
          drops.drop("amount-not-exact-integer");
          continue;
        }
      }
      const kind = family.kind === "transfer" ? null : family.kind;
      if (!kind) {
        drops.drop("event-family-unknown");
        continue;
      }
      rows.push({
        id: onchainEventId(spec.chainId, tx, logIndex),
        chain_id: spec.chainId,
        stablecoin_id: spec.stablecoinId,
        config_key: configKey(spec.stablecoinId, spec.chainId, spec.contract, ev.family),
        contract_address: spec.contract,
        family: ev.family,
        event_name: name,
        event_signature: family.signature,
        topic0: family.topic0,
        kind,
        address,
        amount_raw: amount,
        decimals: spec.decimals,
        amount_source: amount === null ? "unavailable" : "event",
        amount_status: amount === null ? "recoverable_pending" : "resolved",
        tx_hash: tx,
        tx_from: r[spec.columns.txFrom] ? r[spec.columns.txFrom].toLowerCase() : null,
        block_number: block,
        block_hash: spec.columns.blockHash && r[spec.columns.blockHash] ? hex(r[spec.columns.blockHash]) : null,
        log_index: logIndex,
        ts,
        origin: "recorded",
      });
    }
    return drops.output([{ params: { stablecoin: spec.stablecoinId, chain: spec.chainId }, payload: { rows } }]);
  };
}

/**
 * bhemen/usdt `usdt_configs.csv`: USDT (Ethereum, legacy Tether contract) AddedBlackList /
 * RemovedBlackList (`_user`), DestroyedBlackFunds (`_blackListedUser`, `_balance` base units),
 * Issue / Redeem (`amount` base units; the owner is credited/debited, so the affected address is
 * the transaction sender, else the contract). Timestamps are UTC ISO without a zone.
 */
export const readBhemenUsdtCsv = readRecordedLogs({
  stablecoinId: "usdt-tether",
  chainId: "ethereum",
  contract: "0xdac17f958d2ee523a2206206994597c13d831ec7",
  decimals: 6,
  events: {
    AddedBlackList: { family: "tether-legacy-blacklist", address: ["_user"] },
    RemovedBlackList: { family: "tether-legacy-blacklist", address: ["_user"] },
    DestroyedBlackFunds: { family: "tether-legacy-blacklist", address: ["_blackListedUser"], amount: "_balance" },
    Issue: { family: "tether-supply", address: ["msg.sender"], amount: "amount" },
    Redeem: { family: "tether-supply", address: ["msg.sender"], amount: "amount" },
  },
  columns: {
    event: "event_name",
    block: "block_number",
    tx: "txhash",
    logIndex: "log_index",
    time: "timestamp",
    timeKind: "iso-utc",
    txFrom: "msg.sender",
  },
});

/**
 * bhemen/paxos-coins `usdp_configs.csv`: USDP (Ethereum) AddressFrozen / AddressUnfrozen /
 * FrozenAddressWiped (`addr`; a wipe carries no amount), SupplyIncreased (`to`, `value`) and
 * SupplyDecreased (`from`, `value`), 18 decimals. Timestamps are UTC ISO without a zone.
 */
export const readBhemenUsdpCsv = readRecordedLogs({
  stablecoinId: "usdp-paxos",
  chainId: "ethereum",
  contract: "0x8e870d67f660d95d5be530380d0ec0bd388289e1",
  decimals: 18,
  events: {
    AddressFrozen: { family: "paxos-freeze", address: ["addr"] },
    AddressUnfrozen: { family: "paxos-freeze", address: ["addr"] },
    FrozenAddressWiped: { family: "paxos-freeze", address: ["addr"] },
    SupplyIncreased: { family: "paxos-supply", address: ["to"], amount: "value" },
    SupplyDecreased: { family: "paxos-supply", address: ["from"], amount: "value" },
  },
  columns: {
    event: "event_name",
    block: "block_number",
    tx: "txhash",
    logIndex: "log_index",
    time: "timestamp",
    timeKind: "iso-utc",
    txFrom: "msg.sender",
  },
});

/**
 * bhemen/crypto_insights `pyusd_supply_events.csv`: PYUSD (Ethereum) SupplyIncreased (`to`) and
 * SupplyDecreased (`from`), `value` base units (6 decimals), Unix-second timestamps, hashes without
 * `0x`, no log index (see readRecordedLogs). Includes the 2025-10-15 300-trillion mint and its burn.
 */
export const readPyusdSupplyCsv = readRecordedLogs({
  stablecoinId: "pyusd-paypal",
  chainId: "ethereum",
  contract: "0x6c3ea9036406852006290770bedfcaba0e23a0e8",
  decimals: 6,
  events: {
    SupplyIncreased: { family: "paxos-supply", address: ["to"], amount: "value" },
    SupplyDecreased: { family: "paxos-supply", address: ["from"], amount: "value" },
  },
  columns: {
    event: "event",
    block: "blockNumber",
    tx: "transactionHash",
    time: "timestamp",
    timeKind: "unix",
    blockHash: "blockHash",
    txFrom: "msg.sender",
  },
});
