import { z } from "zod";
import { parseJsonText, readCsvRows, ReaderDrops } from "../file-formats.ts";
import { IMPLAUSIBLE_VALUE, RowCollector, toFiniteNumber, toPlausibleAmount } from "../parse-helpers.ts";
import { alignDailyInstant, labelToUtcInstant } from "../time.ts";
import type { Capture, Endpoint, ReaderOutput, RowSink, SourceLineage, SourceTime } from "../types.ts";

/**
 * DefiLlama stablecoins API (`https://stablecoins.llama.fi`). Wire formats: shared/reference/upstreams.md §1.
 * Four endpoints: the current list, per-coin detail history, total/per-chain charts, daily prices.
 *
 * Time: history `date` fields are Unix seconds of 00:00 UTC points (the detail history also ends
 * with one "now" point, which is not a daily point and is dropped as `off-day-boundary`). Recorded
 * archive CSVs label the same points in America/New_York; their readers convert (see time.ts).
 * Implausible values (non-finite, or above 1e13 native units / USD) are dropped as `implausible-value`.
 */
export const DEFILLAMA_BASE_URL = "https://stablecoins.llama.fi";

/** DefiLlama is a primary, independent upstream family. */
export const DEFILLAMA_LINEAGE: SourceLineage = { family: "defillama", derivedFrom: null };

/** Live DefiLlama history: epoch seconds of 00:00 UTC points. */
export const DEFILLAMA_DAILY_TIME: SourceTime = { zone: "UTC", dailyBucket: "00:00 UTC point" };

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
 * Keeps finite, non-negative, plausible bucket values (peg → amount in the capture's circulating
 * unit); counts non-finite or > 1e13 values as `implausible-value` and other bad values as
 * `bucket-invalid-value`. Returns null when the map is absent.
 */
function cleanBuckets(map: unknown, rc: RowCollector): Record<string, number> | null {
  if (map === null || map === undefined) return null;
  if (map === 0) {
    rc.drop("bucket-legacy-zero-absent");
    return null;
  } // pre-2025-12 "no record" marker
  if (typeof map !== "object") {
    rc.drop("bucket-not-a-map");
    return null;
  }
  const out: Record<string, number> = {};
  for (const [peg, raw] of Object.entries(map as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b))) {
    const n = toPlausibleAmount(raw);
    if (n === "implausible") rc.drop(IMPLAUSIBLE_VALUE);
    else if (n === "malformed" || (n !== null && n < 0)) rc.drop("bucket-invalid-value");
    else if (n !== null) out[peg] = n;
  }
  return out;
}

/**
 * The identity fields of a DefiLlama pegged-asset record, as both the `/stablecoins` list entries and
 * the peggedassets-server metadata file (`peggedData.json`) carry them (shared/reference/upstreams.md §1):
 * DefiLlama id (numeric string), name, symbol, CoinGecko id (null or absent when unknown), peg type
 * (`peggedUSD`, `peggedEUR`, …) and mechanism. Loose: other fields pass through; each reader extends
 * it with the fields it reads (the list parser here, the registry generator).
 */
export const PeggedAssetIdentity = z.looseObject({
  id: z.string(),
  name: z.string(),
  symbol: z.string(),
  gecko_id: z.string().nullable().optional(),
  pegType: z.string(),
  pegMechanism: z.string().optional(),
});

const ListAsset = PeggedAssetIdentity.extend({
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

/**
 * `GET /stablecoins?includePrices=true` — the current list (one row per asset), a snapshot at the
 * capture's `observedAt` (Unix s, UTC). `circulating*` values are native peg units before
 * DEFILLAMA_USD_SWITCH_AT and USD after; `price` is USD. An invalid asset is dropped and counted;
 * bad values inside an asset are nulled/removed and counted. A repeated asset id keeps its first
 * entry (`duplicate-identical` / `duplicate-conflicting`, RowCollector.addUnique).
 */
export const stablecoinsEndpoint: Endpoint = {
  key: "defillama.stablecoins",
  source: "defillama",
  lineage: DEFILLAMA_LINEAGE,
  time: { zone: "UTC", dailyBucket: "snapshot at observedAt (no daily points)" },
  mode: "snapshot",
  maxStalenessSec: 6 * 3600,
  /** A list is the current supply for 2 days after it was observed (one missed daily capture). */
  currentWindowSec: 2 * 86400,
  payloadSchema: z.looseObject({ peggedAssets: z.array(z.unknown()), chains: z.array(z.unknown()).optional() }),
  rowSchema: ListRow,
  table: {
    name: "raw_defillama__stablecoins",
    columns: {
      observed_at: "BIGINT",
      circulating_unit: "VARCHAR",
      llama_id: "VARCHAR",
      name: "VARCHAR",
      symbol: "VARCHAR",
      gecko_id: "VARCHAR",
      peg_type: "VARCHAR",
      peg_mechanism: "VARCHAR",
      price_source: "VARCHAR",
      price: "DOUBLE",
      buckets_json: "VARCHAR",
      chain_buckets_json: "VARCHAR",
      chains_json: "VARCHAR",
      is_deprecated: "BOOLEAN",
    },
  },
  toRows(payload: { peggedAssets: unknown[] }, capture: Capture, out?: RowSink) {
    const rc = new RowCollector(ListRow, out);
    for (const item of payload.peggedAssets) {
      const parsed = ListAsset.safeParse(item);
      if (!parsed.success) {
        rc.drop(`asset-invalid-${parsed.error.issues[0]?.path.join(".") || "shape"}`);
        continue;
      }
      const a = parsed.data;
      const rawPrice = toPlausibleAmount(a.price);
      if (rawPrice === "implausible") rc.drop(IMPLAUSIBLE_VALUE);
      const price = typeof rawPrice === "number" && rawPrice > 0 ? rawPrice : null;
      if (rawPrice === "malformed" || (typeof rawPrice === "number" && rawPrice <= 0)) rc.drop("price-invalid");
      const buckets: Record<string, Record<string, number>> = {};
      for (const [outKey, inKey] of BUCKET_KEYS) {
        const b = cleanBuckets((a as Record<string, unknown>)[inKey], rc);
        if (b) buckets[outKey] = b;
      }
      const chainBuckets: Record<string, Record<string, Record<string, number>>> = {};
      for (const [label, raw] of Object.entries(a.chainCirculating ?? {}).sort(([x], [y]) => x.localeCompare(y))) {
        if (!raw || typeof raw !== "object") {
          rc.drop("chain-bucket-invalid");
          continue;
        }
        const cb: Record<string, Record<string, number>> = {};
        for (const [outKey] of BUCKET_KEYS) {
          const b = cleanBuckets((raw as Record<string, unknown>)[outKey], rc);
          if (b) cb[outKey] = b;
        }
        chainBuckets[label] = cb;
      }
      rc.addUnique(a.id, {
        observed_at: capture.observedAt,
        circulating_unit: listCirculatingUnit(capture.observedAt),
        llama_id: a.id,
        name: a.name,
        symbol: a.symbol,
        gecko_id: a.gecko_id ?? null,
        peg_type: a.pegType,
        peg_mechanism: a.pegMechanism ?? null,
        price_source: a.priceSource ?? null,
        price,
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

/**
 * Adds the rows of one `tokens` history (points `{date: Unix s, circulating: {peg: native units}}`)
 * with the daily rule: a point must be within ±1 h of 00:00 UTC (else `off-day-boundary`).
 */
function addTokenRows(rc: RowCollector, llamaId: string, chain: string | null, tokens: unknown[]): void {
  for (const t of tokens) {
    const p = TokenPoint.safeParse(t);
    const date = p.success ? toFiniteNumber(p.data.date) : undefined;
    if (!p.success || date === undefined || date === null) {
      rc.drop("token-point-invalid");
      continue;
    }
    const day = alignDailyInstant(date);
    if (!day.ok) {
      rc.drop(day.reason);
      continue;
    }
    for (const [peg, raw] of Object.entries(p.data.circulating ?? {})) {
      const n = toPlausibleAmount(raw);
      if (n === "implausible") {
        rc.drop(IMPLAUSIBLE_VALUE);
        continue;
      }
      if (n === "malformed" || n === null || n < 0) {
        rc.drop("token-value-invalid");
        continue;
      }
      rc.add({ llama_id: llamaId, chain_label: chain, date: day.date, peg_type: peg, circulating_native: n });
    }
  }
}

/**
 * `GET /stablecoin/{id}` — daily native-unit supply, total (`tokens`) and per chain
 * (`chainBalances`), dated by the UTC day of each 00:00 UTC point. Rows with chain_label null are
 * the upstream total; when a payload has no `tokens`, totals are summed from chains in SQL. A
 * malformed chain entry or point is dropped and counted; the rest of the payload loads.
 */
export const stablecoinDetailEndpoint: Endpoint = {
  key: "defillama.stablecoin",
  source: "defillama",
  lineage: DEFILLAMA_LINEAGE,
  time: DEFILLAMA_DAILY_TIME,
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: 36 * 3600,
  /** A daily point stands as current for 3 days after its 00:00 UTC instant. */
  currentWindowSec: 3 * 86400,
  payloadSchema: z.looseObject({
    id: z.string(),
    tokens: z.array(z.unknown()).optional(),
    chainBalances: z.record(z.string(), z.unknown()).optional(),
  }),
  rowSchema: DetailRow,
  table: {
    name: "raw_defillama__stablecoin_detail",
    columns: {
      llama_id: "VARCHAR",
      chain_label: "VARCHAR",
      date: "VARCHAR",
      peg_type: "VARCHAR",
      circulating_native: "DOUBLE",
    },
  },
  toRows(
    payload: { id: string; tokens?: unknown[]; chainBalances?: Record<string, unknown> },
    _capture: Capture,
    out?: RowSink,
  ) {
    const rc = new RowCollector(DetailRow, out);
    addTokenRows(rc, payload.id, null, payload.tokens ?? []);
    for (const [label, cb] of Object.entries(payload.chainBalances ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
      const tokens = cb && typeof cb === "object" ? (cb as { tokens?: unknown }).tokens : undefined;
      if (!Array.isArray(tokens)) {
        rc.drop("chain-balance-invalid");
        continue;
      }
      addTokenRows(rc, payload.id, label, tokens);
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
 * `GET /stablecoincharts/{chain}` (`all` or a chain label) — daily aggregate supply by peg type:
 * `circulating_usd` (USD) and `circulating_native` (peg units). `date` arrives as a string of
 * epoch seconds of a 00:00 UTC point (daily rule, ±1 h). Peg key `total` is used by captures that
 * only know the all-peg total. Bad points/values are dropped and counted.
 */
export const stablecoinChartsEndpoint: Endpoint = {
  key: "defillama.stablecoincharts",
  source: "defillama",
  lineage: DEFILLAMA_LINEAGE,
  time: DEFILLAMA_DAILY_TIME,
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: 36 * 3600,
  /** A daily point stands as current for 3 days after its 00:00 UTC instant. */
  currentWindowSec: 3 * 86400,
  payloadSchema: z.array(z.unknown()),
  rowSchema: ChartRow,
  table: {
    name: "raw_defillama__stablecoincharts",
    columns: {
      chart: "VARCHAR",
      date: "VARCHAR",
      peg_type: "VARCHAR",
      circulating_usd: "DOUBLE",
      circulating_native: "DOUBLE",
    },
  },
  toRows(payload: unknown[], capture: Capture, out?: RowSink) {
    const rc = new RowCollector(ChartRow, out);
    const chart = capture.params.chain ?? "all";
    for (const item of payload) {
      const p = ChartPoint.safeParse(item);
      const date = p.success ? toFiniteNumber(p.data.date) : undefined;
      if (!p.success || date === undefined || date === null) {
        rc.drop("chart-point-invalid");
        continue;
      }
      const day = alignDailyInstant(date);
      if (!day.ok) {
        rc.drop(day.reason);
        continue;
      }
      const pegs = new Set([
        ...Object.keys(p.data.totalCirculatingUSD ?? {}),
        ...Object.keys(p.data.totalCirculating ?? {}),
      ]);
      for (const peg of [...pegs].sort()) {
        const usd = toPlausibleAmount(p.data.totalCirculatingUSD?.[peg]);
        const native = toPlausibleAmount(p.data.totalCirculating?.[peg]);
        if (usd === "implausible" || native === "implausible") {
          rc.drop(IMPLAUSIBLE_VALUE);
          continue;
        }
        if (usd === "malformed" || native === "malformed") {
          rc.drop("chart-value-invalid");
          continue;
        }
        rc.add({ chart, date: day.date, peg_type: peg, circulating_usd: usd, circulating_native: native });
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

const PricePoint = z.looseObject({ date: z.unknown(), prices: z.record(z.string(), z.unknown()) });

/**
 * Lineage of DefiLlama's daily price archive (`/stablecoinprices`, source label `defillama-prices`):
 * derived from CoinGecko, so family `coingecko`, never independent of CoinGecko's own series.
 * Evidence (recorded check-sked archive vs CoinGecko's daily charts, same 00:00 UTC instant): USDT
 * equal to 1e-9 on 494 of 943 shared days and USDC on 495 — every day from 2020-12-30 to 2022-05-09
 * (2021: 364/364 each); from 2022-05-11 the values differ by a median 6e-4, still a re-publication of
 * aggregator prices with no market of its own. The build re-measures this (`source_lineage_check`).
 */
export const DEFILLAMA_PRICES_LINEAGE: SourceLineage = { family: "coingecko", derivedFrom: "coingecko" };

/**
 * `GET /stablecoinprices` — daily USD price by CoinGecko id at each 00:00 UTC point (`date` epoch
 * s, daily rule ±1 h). Prices ≤ 0 or malformed are dropped (`price-non-positive-or-nan`),
 * non-finite or > 1e13 as `implausible-value`; a malformed point drops only itself. Rows carry the
 * source label `defillama-prices` (lineage: DEFILLAMA_PRICES_LINEAGE), distinct from the list's
 * own current quote (`defillama`).
 */
export const stablecoinPricesEndpoint: Endpoint = {
  key: "defillama.stablecoinprices",
  source: "defillama",
  rowSource: "defillama-prices",
  lineage: DEFILLAMA_PRICES_LINEAGE,
  time: DEFILLAMA_DAILY_TIME,
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: 36 * 3600,
  payloadSchema: z.array(z.unknown()),
  rowSchema: PriceRow,
  table: {
    name: "raw_price_history",
    columns: { source: "VARCHAR", gecko_id: "VARCHAR", date: "VARCHAR", price_usd: "DOUBLE" },
  },
  toRows(payload: unknown[], _capture: Capture, out?: RowSink) {
    const rc = new RowCollector(PriceRow, out);
    for (const raw of payload) {
      const item = PricePoint.safeParse(raw);
      if (!item.success) {
        rc.drop("price-point-invalid");
        continue;
      }
      const date = toFiniteNumber(item.data.date);
      if (date === undefined || date === null) {
        rc.drop("price-date-invalid");
        continue;
      }
      const day = alignDailyInstant(date);
      if (!day.ok) {
        rc.drop(day.reason);
        continue;
      }
      for (const [gecko, v] of Object.entries(item.data.prices).sort(([a], [b]) => a.localeCompare(b))) {
        const n = toPlausibleAmount(v);
        if (n === null) continue; // upstream deletes nulls from history; a null here is "no price", not malformed
        if (n === "implausible") {
          rc.drop(IMPLAUSIBLE_VALUE);
          continue;
        }
        if (n === "malformed" || n <= 0) {
          rc.drop("price-non-positive-or-nan");
          continue;
        }
        rc.add({ source: "defillama-prices", gecko_id: gecko, date: day.date, price_usd: n });
      }
    }
    return rc.result();
  },
  fetchLive: (client) => client.getJson("/stablecoinprices"),
};

// ---------------------------------------------------------------------------------------------
// Recorded-archive readers (check-sked/crypto_data_resources CSVs written from these endpoints).

/**
 * The check-sked archive CSVs label DefiLlama's 00:00 UTC points in US Eastern time: a row
 * labelled D (date-only) or `D 19:00:00`/`D 20:00:00` (EST/EDT) is 00:00 UTC of D+1.
 */
export const DEFILLAMA_ARCHIVE_TIME: SourceTime = {
  zone: "America/New_York",
  dailyBucket: "America/New_York labels of 00:00 UTC points",
};

/**
 * Converts a label of an archive row to the epoch seconds (UTC) the live endpoint would have sent
 * (see labelToUtcInstant), counting a bad label on `drops`; null when dropped.
 */
function archiveDate(label: string | undefined, zone: string, drops: ReaderDrops): number | null {
  const t = labelToUtcInstant(label ?? "", zone);
  if (!t.ok) {
    drops.drop(t.reason);
    return null;
  }
  return t.unixSec;
}

/**
 * DefiLlama chart CSV written from `/stablecoincharts/{chain}`: a date column (`Date`/`date`,
 * labels in `zone`) plus total USD (and optionally total units) columns, no peg breakdown → peg
 * key `total`. Output: the `/stablecoincharts` payload (dates as epoch-second strings, UTC).
 */
export function readDefillamaChartCsv(chain: string, zone: string, usdColumn: string, unitsColumn?: string) {
  return (text: string): ReaderOutput => {
    const drops = new ReaderDrops();
    const payload: unknown[] = [];
    for (const r of readCsvRows(text, drops)) {
      const date = archiveDate(r.Date ?? r.date, zone, drops);
      if (date === null) continue;
      payload.push({
        date: String(date),
        totalCirculatingUSD: { total: r[usdColumn] },
        ...(unitsColumn ? { totalCirculating: { total: r[unitsColumn] } } : {}),
      });
    }
    return drops.output([{ params: { chain }, payload }]);
  };
}

/**
 * DefiLlama `/stablecoinprices` written as a wide CSV: `Date` (labels in `zone`) + one column per
 * CoinGecko id (USD price). Output: the `/stablecoinprices` payload (epoch s, UTC).
 */
export function readDefillamaPricesWideCsv(zone: string) {
  return (text: string): ReaderOutput => {
    const drops = new ReaderDrops();
    const payload: unknown[] = [];
    for (const r of readCsvRows(text, drops)) {
      const date = archiveDate(r.Date, zone, drops);
      if (date === null) continue;
      const prices: Record<string, string> = {};
      for (const [k, v] of Object.entries(r)) if (k !== "Date" && v !== "") prices[k] = v;
      payload.push({ date, prices });
    }
    return drops.output([{ params: {}, payload }]);
  };
}

/**
 * DefiLlama `/stablecoin/{id}` per-chain history written as a wide CSV: `Date` (labels in `zone`,
 * with times) + `<Chain>_Circulating` columns (native units of the coin's peg). Output: the
 * `/stablecoin/{id}` payload with `chainBalances` only (dates epoch s, UTC: the exact instant of
 * each label, so a non-midnight "now" row is dropped by the endpoint's daily rule).
 */
export function readDefillamaChainWideCsv(llamaId: string, pegType: string, zone: string) {
  return (text: string): ReaderOutput => {
    const drops = new ReaderDrops();
    const chainBalances: Record<string, { tokens: unknown[] }> = {};
    for (const r of readCsvRows(text, drops)) {
      const date = archiveDate(r.Date, zone, drops);
      if (date === null) continue;
      for (const [col, v] of Object.entries(r)) {
        const m = /^(.*)_Circulating$/.exec(col);
        if (!m || v === "" || v === undefined) continue;
        chainBalances[m[1]] ??= { tokens: [] };
        chainBalances[m[1]].tokens.push({ date, circulating: { [pegType]: v } });
      }
    }
    return drops.output([{ params: { id: llamaId }, payload: { id: llamaId, chainBalances } }]);
  };
}

// ---------------------------------------------------------------------------------------------
// ConorsCode/open-defi-data's normalised list (`data/stablecoins.json`, MANIFEST §13).

/**
 * One record of open-defi-data's normalised `/stablecoins?includePrices=true` list: DefiLlama's
 * values passed through (`circulating*Usd` = `circulating*.peggedUSD`, USD; null for every non-USD
 * peg, whose fetcher reads `peggedUSD` only), `price` USD or null, `scrapedAt` an ISO-8601 UTC instant.
 * No per-chain amounts, no `gecko_id` / `priceSource`.
 */
const OpenDefiStablecoin = z.object({
  id: z.string().min(1),
  name: z.string(),
  symbol: z.string(),
  pegType: z.string(),
  pegMechanism: z.string().nullable().optional(),
  circulatingUsd: z.number().nullable(),
  circulatingPrevDayUsd: z.number().nullable(),
  circulatingPrevWeekUsd: z.number().nullable(),
  circulatingPrevMonthUsd: z.number().nullable(),
  price: z.number().nullable(),
  chains: z.array(z.string()),
  scrapedAt: z.string(),
});

/** The open-defi-data list's time labels: `scrapedAt` ISO-8601 instants in UTC; the list is one snapshot. */
export const OPEN_DEFI_STABLECOINS_TIME: SourceTime = {
  zone: "UTC",
  dailyBucket: "snapshot at scrapedAt (no daily points; prev day/week/month are DefiLlama's own points)",
};

/**
 * Reader of open-defi-data's `stablecoins.<date>.json` (a JSON array of normalised DefiLlama list
 * records, see OpenDefiStablecoin) into the `/stablecoins` payload the live endpoint returns
 * (`{peggedAssets}`), so it loads through `stablecoinsEndpoint` like a live list capture observed at
 * `observedAt` (Unix s, UTC: the run's newest `scrapedAt`, rounded up to the second).
 * Each record becomes an asset with `circulating*: {peggedUSD: <usd>}` when the USD value is
 * present (absent otherwise, so non-USD pegs carry no supply), its `price`, `chains` and no
 * `chainCirculating`. Skipped records, counted: `record-invalid-<field>` (zod), `scraped-at-invalid`
 * (unparsable instant) and `scraped-at-after-observation` (scraped after `observedAt`: a build as of
 * an earlier instant must not see it). Throws (JsonPositionError) on invalid JSON and when the file
 * is not an array.
 */
export function readOpenDefiStablecoinsJson(observedAt: number) {
  return (text: string): ReaderOutput => {
    const drops = new ReaderDrops();
    const records = parseJsonText(text);
    if (!Array.isArray(records)) throw new Error("open-defi-data stablecoins list: expected a JSON array of records");
    const peggedAssets: Record<string, unknown>[] = [];
    for (const raw of records) {
      const parsed = OpenDefiStablecoin.safeParse(raw);
      if (!parsed.success) {
        drops.drop(`record-invalid-${parsed.error.issues[0]?.path.join(".") || "shape"}`);
        continue;
      }
      const r = parsed.data;
      const t = Date.parse(r.scrapedAt);
      if (!Number.isFinite(t) || !/(Z|[+-]\d{2}:\d{2})$/.test(r.scrapedAt)) {
        drops.drop("scraped-at-invalid");
        continue;
      }
      if (t / 1000 > observedAt) {
        drops.drop("scraped-at-after-observation");
        continue;
      }
      const usd = (v: number | null) => (v === null ? undefined : { peggedUSD: v });
      peggedAssets.push({
        id: r.id,
        name: r.name,
        symbol: r.symbol,
        pegType: r.pegType,
        ...(r.pegMechanism ? { pegMechanism: r.pegMechanism } : {}),
        price: r.price,
        circulating: usd(r.circulatingUsd),
        circulatingPrevDay: usd(r.circulatingPrevDayUsd),
        circulatingPrevWeek: usd(r.circulatingPrevWeekUsd),
        circulatingPrevMonth: usd(r.circulatingPrevMonthUsd),
        chains: r.chains,
      });
    }
    return drops.output([{ params: {}, payload: { peggedAssets } }]);
  };
}
