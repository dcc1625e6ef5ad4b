import { z } from "zod";
import type { ColumnType } from "../sources/column-type.ts";

/**
 * The on-chain event row: one decoded log of a tracked contract (freeze/blacklist family or
 * mint/burn), as written by live ingestion (EVM `eth_getLogs`, TronGrid events) into the on-chain
 * ledger and by the capture readers of the recorded logs (bhemen USDT, USDP, PYUSD). Both write
 * the same columns, so the build loads them into one raw table, `raw_onchain_events`.
 *
 * Amounts are exact integers in token base units as decimal strings (`amount_raw`; DECIMAL(38,0) in
 * SQL); `decimals` belongs to the contract. Times are Unix seconds (block time, UTC).
 */

/** What an event does: freeze family (`blacklist`, `unblacklist`, `destroy`) or supply (`mint`, `burn`). */
export const EVENT_KINDS = ["blacklist", "unblacklist", "destroy", "mint", "burn"] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** Where an event's amount came from (spec 2.5 `amountSource`). */
export const AMOUNT_SOURCES = [
  "event",
  "historical_balance",
  "current_balance_snapshot",
  "derived",
  "legacy_migration",
  "unavailable",
] as const;
/** Whether an event's amount is known (spec 2.5 `amountStatus`); a failed provider read is `provider_failed`, never zero. */
export const AMOUNT_STATUSES = [
  "resolved",
  "recoverable_pending",
  "permanently_unavailable",
  "provider_failed",
  "ambiguous",
] as const;

/** One row of `raw_onchain_events` / the ledger's `onchain_events`. */
export const OnchainEventRowSchema = z.object({
  /** `{chainId}-{txHash}-{logIndex}` (spec 2.5), chainId the registry chain id, txHash lowercase 0x-hex; `-{i}` appended for element i > 0 of an `address[]` log. */
  id: z.string().regex(/^[a-z0-9-]+-(0x[0-9a-f]{64}|[0-9a-f]{64})-\d+(-\d+)?$/),
  /** Registry chain id (`ethereum`, `tron`, …). */
  chain_id: z.string(),
  stablecoin_id: z.string(),
  /** `{stablecoinId}:{chainId}:{contract lowercase}:{family}`: the unit of a sync cursor. */
  config_key: z.string(),
  /** Lowercase 0x-hex on EVM chains, base58 on Tron. */
  contract_address: z.string(),
  /** Event family (tracked-contracts `eventFamilies` key, or `erc20-supply`, `tether-supply`, `paxos-supply`). */
  family: z.string(),
  /** Solidity event name, e.g. `AddedBlackList`, `Transfer`. */
  event_name: z.string(),
  /** Canonical signature, e.g. `DestroyedBlackFunds(address,uint256)`. */
  event_signature: z.string(),
  /** keccak256 of the signature, 0x-hex; null when the recorded source does not carry it. */
  topic0: z.string().nullable(),
  kind: z.enum(EVENT_KINDS),
  /** Affected address: frozen/unfrozen/destroyed holder; mint recipient; burn holder. */
  address: z.string(),
  /** Base units, decimal digits; null when the event carries none and no balance read resolved it. */
  amount_raw: z.string().regex(/^\d+$/).nullable(),
  decimals: z.number().int().nonnegative(),
  amount_source: z.enum(AMOUNT_SOURCES),
  amount_status: z.enum(AMOUNT_STATUSES),
  tx_hash: z.string(),
  /** Transaction sender when known (issuer/minter), else null. */
  tx_from: z.string().nullable(),
  block_number: z.number().int().nonnegative(),
  /** Null for recorded rows whose source omits it. */
  block_hash: z.string().nullable(),
  log_index: z.number().int().nonnegative(),
  /** Block time, Unix s. */
  ts: z.number().int().positive(),
  origin: z.enum(["recorded", "live"]),
});
export type OnchainEventRow = z.infer<typeof OnchainEventRowSchema>;

/** DuckDB column types of the row, in column order (raw table and ledger table alike). */
export const ONCHAIN_EVENT_COLUMNS: Record<keyof OnchainEventRow, ColumnType> = {
  id: "VARCHAR",
  chain_id: "VARCHAR",
  stablecoin_id: "VARCHAR",
  config_key: "VARCHAR",
  contract_address: "VARCHAR",
  family: "VARCHAR",
  event_name: "VARCHAR",
  event_signature: "VARCHAR",
  topic0: "VARCHAR",
  kind: "VARCHAR",
  address: "VARCHAR",
  amount_raw: "VARCHAR",
  decimals: "BIGINT",
  amount_source: "VARCHAR",
  amount_status: "VARCHAR",
  tx_hash: "VARCHAR",
  tx_from: "VARCHAR",
  block_number: "BIGINT",
  block_hash: "VARCHAR",
  log_index: "BIGINT",
  ts: "BIGINT",
  origin: "VARCHAR",
};

/** Event id of spec 2.5: `{chainId}-{txHash}-{logIndex}`. */
export function onchainEventId(chainId: string, txHash: string, logIndex: number): string {
  return `${chainId}-${txHash.toLowerCase()}-${logIndex}`;
}

/** Sync cursor key of one tracked (coin, chain, contract, family). */
export function configKey(stablecoinId: string, chainId: string, contract: string, family: string): string {
  return `${stablecoinId}:${chainId}:${chainId === "tron" ? contract : contract.toLowerCase()}:${family}`;
}

/**
 * Exact decimal text of `raw` base units with `decimals` places (`176213018853435`, 6 →
 * `176213018.853435`): left-pad to decimals + 1 digits, split, strip trailing fraction zeros. Never
 * goes through a float; throws on a non-digit input.
 */
export function decimalString(raw: string | bigint, decimals: number): string {
  const s = typeof raw === "bigint" ? raw.toString() : raw;
  if (!/^\d+$/.test(s)) throw new Error(`not base units: ${s}`);
  const padded = s.padStart(decimals + 1, "0");
  const int = padded.slice(0, padded.length - decimals).replace(/^0+(?=\d)/, "");
  const frac = decimals ? padded.slice(padded.length - decimals).replace(/0+$/, "") : "";
  return frac ? `${int}.${frac}` : int;
}
