import { z } from "zod";
import { isoDay, RowCollector, toFiniteNumber } from "./parse-helpers.ts";
import type { Capture, Endpoint } from "./types.ts";

/**
 * DefiLlama stablecoins API (`https://stablecoins.llama.fi`). Wire formats: shared/reference/upstreams.md §1.
 * Four endpoints: the current list, per-coin detail history, total/per-chain charts, daily prices.
 */
export const DEFILLAMA_BASE_URL = "https://stablecoins.llama.fi";

/**
 * Date (Unix s) from which `/stablecoins` `circulating*` values are USD (upstream commit
 * `46f5c9cc`); captures observed before it carry native peg units.
 */
export const DEFILLAMA_USD_SWITCH_AT = Date.UTC(2025, 11, 1) / 1000;

/** Unit of `circulating*` values in a `/stablecoins` capture observed at `observedAt` (Unix s). */
export function listCirculatingUnit(observedAt: number): "native" | "usd" {
  return observedAt < DEFILLAMA_USD_SWITCH_AT ? "native" : "usd";
}

const PegBuckets = z.unknown();

/**
 * Keeps finite, non-negative bucket values; counts every other value under `reason`.
 * Returns null when the map is absent.
 */
function cleanBuckets(map: unknown, rc: RowCollector): Record<string, number> | null {
  if (map === null || map === undefined) return null;
  if (map === 0) { rc.drop("bucket-legacy-zero-absent"); return null; } // pre-2025-12 "no record" marker
  if (typeof map !== "object") { rc.drop("bucket-not-a-map"); return null; }
  const out: Record<string, number> = {};
  for (const [peg, raw] of Object.entries(map as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b))) {
    const n = toFiniteNumber(raw);
    if (n === undefined || (n !== null && n < 0)) rc.drop("bucket-invalid-value");
    else if (n !== null) out[peg] = n;
  }
  return out;
}

const ListAsset = z.looseObject({
  id: z.string(),
  name: z.string(),
  symbol: z.string(),
  gecko_id: z.string().nullable().optional(),
  pegType: z.string(),
  pegMechanism: z.string().optional(),
  priceSource: z.string().nullable().optional(),
  price: z.unknown().optional(),
  circulating: PegBuckets.optional(),
  circulatingPrevDay: PegBuckets.optional(),
  circulatingPrevWeek: PegBuckets.optional(),
  circulatingPrevMonth: PegBuckets.optional(),
  chainCirculating: z.record(z.string(), z.unknown()).optional(),
  chains: z.array(z.string()).optional(),
  deprecated: z.boolean().optional(),
  delisted: z.boolean().optional(),
  yieldBearing: z.boolean().optional(),
});

const ListRow = z.object({
  observed_at: z.number().int(),
  circulating_unit: z.enum(["native", "usd"]),
  llama_id: z.string().min(1),
  name: z.string(),
  symbol: z.string(),
  gecko_id: z.string().nullable(),
  peg_type: z.string().regex(/^pegged[A-Z]+$/),
  peg_mechanism: z.string().nullable(),
  price_source: z.string().nullable(),
  price: z.number().nullable(),
  /** `{current, circulatingPrevDay, circulatingPrevWeek, circulatingPrevMonth}` → peg → value (cleaned). */
  buckets_json: z.string(),
  /** chain label → same shape as buckets_json. */
  chain_buckets_json: z.string(),
  chains_json: z.string(),
  is_deprecated: z.boolean(),
});

const BUCKET_KEYS = [
  ["current", "circulating"],
  ["circulatingPrevDay", "circulatingPrevDay"],
  ["circulatingPrevWeek", "circulatingPrevWeek"],
  ["circulatingPrevMonth", "circulatingPrevMonth"],
] as const;

/** `GET /stablecoins?includePrices=true` — the current list (one row per asset). */
export const stablecoinsEndpoint: Endpoint = {
  key: "defillama.stablecoins",
  source: "defillama",
  mode: "snapshot",
  maxStalenessSec: 6 * 3600,
  payloadSchema: z.looseObject({ peggedAssets: z.array(z.unknown()), chains: z.array(z.unknown()).optional() }),
  rowSchema: ListRow,
  table: {
    name: "raw_defillama__stablecoins",
    columns: {
      observed_at: "BIGINT", circulating_unit: "VARCHAR", llama_id: "VARCHAR", name: "VARCHAR", symbol: "VARCHAR",
      gecko_id: "VARCHAR", peg_type: "VARCHAR", peg_mechanism: "VARCHAR", price_source: "VARCHAR", price: "DOUBLE",
      buckets_json: "VARCHAR", chain_buckets_json: "VARCHAR", chains_json: "VARCHAR", is_deprecated: "BOOLEAN",
    },
  },
  toRows(payload: { peggedAssets: unknown[] }, capture: Capture) {
    const rc = new RowCollector(ListRow);
    for (const item of payload.peggedAssets) {
      const parsed = ListAsset.safeParse(item);
      if (!parsed.success) { rc.drop(`asset-invalid-${parsed.error.issues[0]?.path.join(".") || "shape"}`); continue; }
      const a = parsed.data;
      const price = toFiniteNumber(a.price);
      if (price === undefined || (price !== null && price <= 0)) rc.drop("price-invalid");
      const buckets: Record<string, Record<string, number>> = {};
      for (const [outKey, inKey] of BUCKET_KEYS) {
        const b = cleanBuckets((a as Record<string, unknown>)[inKey], rc);
        if (b) buckets[outKey] = b;
      }
      const chainBuckets: Record<string, Record<string, Record<string, number>>> = {};
      for (const [label, raw] of Object.entries(a.chainCirculating ?? {}).sort(([x], [y]) => x.localeCompare(y))) {
        if (!raw || typeof raw !== "object") { rc.drop("chain-bucket-invalid"); continue; }
        const cb: Record<string, Record<string, number>> = {};
        for (const [outKey] of BUCKET_KEYS) {
          const b = cleanBuckets((raw as Record<string, unknown>)[outKey], rc);
          if (b) cb[outKey] = b;
        }
        chainBuckets[label] = cb;
      }
      rc.add({
        observed_at: capture.observedAt,
        circulating_unit: listCirculatingUnit(capture.observedAt),
        llama_id: a.id,
        name: a.name,
        symbol: a.symbol,
        gecko_id: a.gecko_id ?? null,
        peg_type: a.pegType,
        peg_mechanism: a.pegMechanism ?? null,
        price_source: a.priceSource ?? null,
        price: price === undefined || (price !== null && price <= 0) ? null : price,
        buckets_json: JSON.stringify(buckets),
        chain_buckets_json: JSON.stringify(chainBuckets),
        chains_json: JSON.stringify(a.chains ?? []),
        is_deprecated: Boolean(a.deprecated || a.delisted),
      });
    }
    return rc.result();
  },
  fetchLive: (client) => client.getJson("/stablecoins?includePrices=true"),
};

const DetailRow = z.object({
  llama_id: z.string().min(1),
  chain_label: z.string().nullable(),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  peg_type: z.string(),
  circulating_native: z.number().nonnegative(),
});

const TokenPoint = z.looseObject({ date: z.unknown(), circulating: z.record(z.string(), z.unknown()).optional() });

function addTokenRows(rc: RowCollector, llamaId: string, chain: string | null, tokens: unknown[]): void {
  for (const t of tokens) {
    const p = TokenPoint.safeParse(t);
    const date = p.success ? toFiniteNumber(p.data.date) : undefined;
    if (!p.success || date === undefined || date === null) { rc.drop("token-point-invalid"); continue; }
    for (const [peg, raw] of Object.entries(p.data.circulating ?? {})) {
      const n = toFiniteNumber(raw);
      if (n === undefined || n === null || n < 0) { rc.drop("token-value-invalid"); continue; }
      rc.add({ llama_id: llamaId, chain_label: chain, date: isoDay(date), peg_type: peg, circulating_native: n });
    }
  }
}

/**
 * `GET /stablecoin/{id}` — daily native-unit supply, total (`tokens`) and per chain
 * (`chainBalances`). Rows with chain_label null are the upstream total; when a payload has no
 * `tokens`, totals are summed from chains in SQL.
 */
export const stablecoinDetailEndpoint: Endpoint = {
  key: "defillama.stablecoin",
  source: "defillama",
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: 36 * 3600,
  payloadSchema: z.looseObject({
    id: z.string(),
    tokens: z.array(z.unknown()).optional(),
    chainBalances: z.record(z.string(), z.looseObject({ tokens: z.array(z.unknown()) })).optional(),
  }),
  rowSchema: DetailRow,
  table: {
    name: "raw_defillama__stablecoin_detail",
    columns: { llama_id: "VARCHAR", chain_label: "VARCHAR", date: "VARCHAR", peg_type: "VARCHAR", circulating_native: "DOUBLE" },
  },
  toRows(payload: { id: string; tokens?: unknown[]; chainBalances?: Record<string, { tokens: unknown[] }> }) {
    const rc = new RowCollector(DetailRow);
    addTokenRows(rc, payload.id, null, payload.tokens ?? []);
    for (const [label, cb] of Object.entries(payload.chainBalances ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
      addTokenRows(rc, payload.id, label, cb.tokens);
    }
    return rc.result();
  },
  fetchLive: (client, params) => client.getJson(`/stablecoin/${encodeURIComponent(params.id)}`),
};

const ChartRow = z.object({
  chart: z.string(),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  peg_type: z.string(),
  circulating_usd: z.number().nonnegative().nullable(),
  circulating_native: z.number().nonnegative().nullable(),
});
const ChartPoint = z.looseObject({
  date: z.unknown(),
  totalCirculating: z.record(z.string(), z.unknown()).optional(),
  totalCirculatingUSD: z.record(z.string(), z.unknown()).optional(),
});

/**
 * `GET /stablecoincharts/{chain}` (`all` or a chain label) — daily aggregate supply by peg type.
 * `date` arrives as a string of epoch seconds. Peg key `total` is used by captures that only
 * know the all-peg total.
 */
export const stablecoinChartsEndpoint: Endpoint = {
  key: "defillama.stablecoincharts",
  source: "defillama",
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: 36 * 3600,
  payloadSchema: z.array(z.unknown()),
  rowSchema: ChartRow,
  table: {
    name: "raw_defillama__stablecoincharts",
    columns: { chart: "VARCHAR", date: "VARCHAR", peg_type: "VARCHAR", circulating_usd: "DOUBLE", circulating_native: "DOUBLE" },
  },
  toRows(payload: unknown[], capture: Capture) {
    const rc = new RowCollector(ChartRow);
    const chart = capture.params.chain ?? "all";
    for (const item of payload) {
      const p = ChartPoint.safeParse(item);
      const date = p.success ? toFiniteNumber(p.data.date) : undefined;
      if (!p.success || date === undefined || date === null) { rc.drop("chart-point-invalid"); continue; }
      const pegs = new Set([...Object.keys(p.data.totalCirculatingUSD ?? {}), ...Object.keys(p.data.totalCirculating ?? {})]);
      for (const peg of [...pegs].sort()) {
        const usd = toFiniteNumber(p.data.totalCirculatingUSD?.[peg]);
        const native = toFiniteNumber(p.data.totalCirculating?.[peg]);
        if (usd === undefined || native === undefined) { rc.drop("chart-value-invalid"); continue; }
        rc.add({ chart, date: isoDay(date), peg_type: peg, circulating_usd: usd, circulating_native: native });
      }
    }
    return rc.result();
  },
  fetchLive: (client, params) => client.getJson(`/stablecoincharts/${encodeURIComponent(params.chain ?? "all")}`),
};

const PriceRow = z.object({
  source: z.string(),
  gecko_id: z.string().min(1),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  price_usd: z.number().positive(),
});

/** `GET /stablecoinprices` — daily price by CoinGecko id. Prices ≤ 0 or non-finite are dropped. */
export const stablecoinPricesEndpoint: Endpoint = {
  key: "defillama.stablecoinprices",
  source: "defillama",
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: 36 * 3600,
  payloadSchema: z.array(z.looseObject({ date: z.unknown(), prices: z.record(z.string(), z.unknown()) })),
  rowSchema: PriceRow,
  table: {
    name: "raw_price_history",
    columns: { source: "VARCHAR", gecko_id: "VARCHAR", date: "VARCHAR", price_usd: "DOUBLE" },
  },
  toRows(payload: { date: unknown; prices: Record<string, unknown> }[]) {
    const rc = new RowCollector(PriceRow);
    for (const item of payload) {
      const date = toFiniteNumber(item.date);
      if (date === undefined || date === null) { rc.drop("price-date-invalid"); continue; }
      for (const [gecko, raw] of Object.entries(item.prices).sort(([a], [b]) => a.localeCompare(b))) {
        const n = toFiniteNumber(raw);
        if (n === null) continue; // upstream deletes nulls from history; a null here is "no price", not malformed
        if (n === undefined || n <= 0) { rc.drop("price-non-positive-or-nan"); continue; }
        rc.add({ source: "defillama", gecko_id: gecko, date: isoDay(date), price_usd: n });
      }
    }
    return rc.result();
  },
  fetchLive: (client) => client.getJson("/stablecoinprices"),
};
