import { z } from "zod";
import { readCsvRows, ReaderDrops } from "./file-formats.ts";
import { RowCollector } from "./parse-helpers.ts";
import { alignDailyLabel, parseTimeLabel } from "./time.ts";
import type { Capture, Endpoint, ReaderOutput, RowSink } from "./types.ts";

/**
 * Archive-only inputs: recorded histories with no live client of ours. They load into warehouse
 * history tables like any other history capture.
 */

const AlchemyPriceRow = z.object({
  source: z.string(),
  gecko_id: z.string().min(1),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  price_usd: z.number().positive(),
});

/**
 * Daily USD prices from Alchemy's historical token-price API (as recorded by bhemen/crypto_insights).
 * Payload: `{ geckoId, points: [{ date ("YYYY-MM-DD", a UTC day), price (USD, text) }] }`. Same raw
 * table as DefiLlama prices, source `alchemy`. The series is a copy of CoinGecko's daily series
 * (MANIFEST: 857/857 shared days equal), so its family is `coingecko`. Bad points drop only themselves.
 */
export const alchemyDailyPricesArchive: Endpoint = {
  key: "alchemy.daily_prices",
  source: "alchemy",
  lineage: { family: "coingecko", derivedFrom: "coingecko" },
  time: { zone: "UTC", dailyBucket: "00:00 UTC point (one row per UTC day)" },
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: Number.POSITIVE_INFINITY,
  payloadSchema: z.object({ geckoId: z.string(), points: z.array(z.unknown()) }),
  rowSchema: AlchemyPriceRow,
  table: {
    name: "raw_price_history",
    columns: { source: "VARCHAR", gecko_id: "VARCHAR", date: "VARCHAR", price_usd: "DOUBLE" },
  },
  toRows(payload: { geckoId: string; points: unknown[] }, _capture: Capture, out?: RowSink) {
    const rc = new RowCollector(AlchemyPriceRow, out);
    for (const raw of payload.points) {
      const p = (raw && typeof raw === "object" ? raw : {}) as { date?: unknown; price?: unknown };
      if (typeof p.date !== "string") {
        rc.drop("time-label-invalid");
        continue;
      }
      const day = alignDailyLabel(p.date, "UTC");
      if (!day.ok) {
        rc.drop(day.reason);
        continue;
      }
      const price =
        typeof p.price === "string" && p.price.trim() !== ""
          ? Number(p.price)
          : typeof p.price === "number"
            ? p.price
            : NaN;
      if (!Number.isFinite(price) || price <= 0) {
        rc.drop("price-non-positive-or-nan");
        continue;
      }
      rc.add({ source: "alchemy", gecko_id: payload.geckoId, date: day.date, price_usd: price });
    }
    return rc.result();
  },
};

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
 * Alchemy daily price CSV (`timestamp` = a UTC day `YYYY-MM-DD`, `price` USD) → alchemy payload.
 * Rows papaparse flags are dropped as `csv-parse-error`.
 */
export function readAlchemyPriceCsv(geckoId: string) {
  return (text: string): ReaderOutput => {
    const drops = new ReaderDrops();
    const points = readCsvRows(text, drops).map((r) => ({ date: r.timestamp, price: r.price }));
    return drops.output([{ params: { id: geckoId }, payload: { geckoId, points } }]);
  };
}

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
