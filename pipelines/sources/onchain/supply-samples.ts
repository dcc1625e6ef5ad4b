import { z } from "zod";
import { readCsvRows, ReaderDrops } from "../file-formats.ts";
import { RowCollector } from "../parse-helpers.ts";
import { parseTimeLabel } from "../time.ts";
import type { Capture, Endpoint, ReaderOutput, RowSink } from "../types.ts";

/**
 * Archive-only input: recorded on-chain `totalSupply()` samples, with no live client of ours. They
 * load into a warehouse history table like any other history capture.
 */

const SupplySampleRow = z.object({
  chain_id: z.string(),
  contract_address: z.string(),
  symbol: z.string(),
  block_number: z.number().int().nonnegative(),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  observed_at: z.number().int(),
  /** Raw `totalSupply()` in token base units (decimal string; exact above 2^53). */
  supply_raw: z.string().regex(/^\d+$/),
  decimals: z.number().int(),
});

/**
 * On-chain `totalSupply()` samples (every 5,000 blocks) of BNB-chain stablecoin contracts.
 * Payload: `{ chainId, decimals, rows: [{ address, symbol, block, supply (raw base units), ts ("YYYY-MM-DD hh:mm:ss" UTC) }] }`.
 * `observed_at` is the block time (Unix s), `date` its UTC day. A malformed row drops only itself.
 */
export const onchainSupplySamplesArchive: Endpoint = {
  key: "onchain.total_supply_samples",
  source: "onchain",
  lineage: { family: "onchain", derivedFrom: null },
  time: { zone: "UTC", dailyBucket: "intraday sample; date = UTC day of block time" },
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: Number.POSITIVE_INFINITY,
  payloadSchema: z.object({
    chainId: z.string(),
    decimals: z.number().int(),
    rows: z.array(z.unknown()),
  }),
  rowSchema: SupplySampleRow,
  table: {
    name: "raw_onchain__total_supply_samples",
    columns: {
      chain_id: "VARCHAR",
      contract_address: "VARCHAR",
      symbol: "VARCHAR",
      block_number: "BIGINT",
      date: "VARCHAR",
      observed_at: "BIGINT",
      supply_raw: "HUGEINT",
      decimals: "BIGINT",
    },
  },
  toRows(payload: { chainId: string; decimals: number; rows: unknown[] }, _capture: Capture, out?: RowSink) {
    const rc = new RowCollector(SupplySampleRow, out);
    for (const raw of payload.rows) {
      if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
        rc.drop("sample-row-invalid");
        continue;
      }
      const r = raw as Record<string, string>;
      const label = typeof r.ts === "string" ? parseTimeLabel(r.ts, "UTC") : null;
      if (label?.kind !== "instant") {
        rc.drop("sample-timestamp-invalid");
        continue;
      }
      const ts = Math.floor(label.unixSec);
      rc.add({
        chain_id: payload.chainId,
        contract_address: String(r.address ?? "").toLowerCase(),
        symbol: r.symbol,
        block_number: Number(r.block),
        date: new Date(ts * 1000).toISOString().slice(0, 10),
        observed_at: ts,
        supply_raw: r.supply,
        decimals: payload.decimals,
      });
    }
    return rc.result();
  },
};

// ---------------------------------------------------------------------------------------------
// Recorded-file readers.

/**
 * On-chain totalSupply sample CSV (`address, symbol, block, supply` raw base units, `ts` UTC
 * wall time) → samples payload. Rows papaparse flags are dropped as `csv-parse-error`.
 */
export function readTotalSupplySampleCsv(chainId: string, decimals: number) {
  return (text: string): ReaderOutput => {
    const drops = new ReaderDrops();
    const rows = readCsvRows(text, drops);
    return drops.output([{ params: { chain: chainId }, payload: { chainId, decimals, rows } }]);
  };
}
