import { z } from "zod";
import { RowCollector } from "./parse-helpers.ts";
import type { Endpoint } from "./types.ts";

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
 * Payload: `{ geckoId, points: [{ date, price }] }`. Same raw table as DefiLlama prices, source `alchemy`.
 */
export const alchemyDailyPricesArchive: Endpoint = {
  key: "alchemy.daily_prices",
  source: "alchemy",
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: Number.POSITIVE_INFINITY,
  payloadSchema: z.object({ geckoId: z.string(), points: z.array(z.object({ date: z.string(), price: z.unknown() })) }),
  rowSchema: AlchemyPriceRow,
  table: { name: "raw_price_history", columns: { source: "VARCHAR", gecko_id: "VARCHAR", date: "VARCHAR", price_usd: "DOUBLE" } },
  toRows(payload: { geckoId: string; points: { date: string; price: unknown }[] }) {
    const rc = new RowCollector(AlchemyPriceRow);
    for (const p of payload.points) {
      const price = typeof p.price === "string" && p.price.trim() !== "" ? Number(p.price) : NaN;
      if (!Number.isFinite(price) || price <= 0) { rc.drop("price-non-positive-or-nan"); continue; }
      rc.add({ source: "alchemy", gecko_id: payload.geckoId, date: p.date.slice(0, 10), price_usd: price });
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
 * Payload: `{ chainId, decimals, rows: [{ address, symbol, block, supply, ts }] }`.
 */
export const onchainSupplySamplesArchive: Endpoint = {
  key: "onchain.total_supply_samples",
  source: "onchain",
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: Number.POSITIVE_INFINITY,
  payloadSchema: z.object({
    chainId: z.string(),
    decimals: z.number().int(),
    rows: z.array(z.record(z.string(), z.string())),
  }),
  rowSchema: SupplySampleRow,
  table: {
    name: "raw_onchain__total_supply_samples",
    columns: {
      chain_id: "VARCHAR", contract_address: "VARCHAR", symbol: "VARCHAR", block_number: "BIGINT", date: "VARCHAR",
      observed_at: "BIGINT", supply_raw: "HUGEINT", decimals: "BIGINT",
    },
  },
  toRows(payload: { chainId: string; decimals: number; rows: Record<string, string>[] }) {
    const rc = new RowCollector(SupplySampleRow);
    for (const r of payload.rows) {
      const ts = Math.floor(Date.parse(`${(r.ts ?? "").replace(" ", "T")}Z`) / 1000);
      if (!Number.isFinite(ts)) { rc.drop("sample-timestamp-invalid"); continue; }
      rc.add({
        chain_id: payload.chainId, contract_address: (r.address ?? "").toLowerCase(), symbol: r.symbol,
        block_number: Number(r.block), date: new Date(ts * 1000).toISOString().slice(0, 10), observed_at: ts,
        supply_raw: r.supply, decimals: payload.decimals,
      });
    }
    return rc.result();
  },
};
