import { decimalString } from "../pipelines/onchain/contract.ts";

/**
 * The amount columns of an on-chain ledger mart row (`blacklist_events`; the mint/burn artifacts read the
 * same exact decimal from `mint_burn_events.amount_native` in SQL):
 * `amount_raw` the exact base units (DECIMAL(38,0), read as text, a number or a bigint; null or absent
 * when unknown) and `decimals` the contract's decimals (a number or its text).
 */
export interface LedgerAmountRow {
  amount_raw?: unknown;
  decimals: unknown;
}

/** The published amount of an on-chain event (BlacklistEvent, MintBurnEvent), keys in this order. */
export interface LedgerAmount {
  /** Token units: the exact decimal of the base units, then a JSON number; null when unknown, never zero. */
  amountNative: number | null;
  /** Base units as a decimal string; null when unknown. */
  amountRaw: string | null;
  /** The contract's decimals (amountRaw / 10^decimals = amountNative). */
  decimals: number;
}

/**
 * The amount fields of a ledger mart row as freeze events publish them (spread in
 * place, so the key order stays that of the event schema). Throws when `amount_raw` is not base units
 * (decimalString).
 */
export function ledgerAmount(r: LedgerAmountRow): LedgerAmount {
  const raw = r.amount_raw === null || r.amount_raw === undefined ? null : String(r.amount_raw);
  return {
    amountNative: raw === null ? null : Number(decimalString(raw, Number(r.decimals))),
    amountRaw: raw,
    decimals: Number(r.decimals),
  };
}
