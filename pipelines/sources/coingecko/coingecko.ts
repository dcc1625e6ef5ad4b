import { z } from "zod";
import { readCsvRows, ReaderDrops } from "../file-formats.ts";
import { RowCollector, toFiniteNumber } from "../parse-helpers.ts";
import {
  alignDailyInstant,
  DAY_SEC,
  OFF_DAY_BOUNDARY,
  parseTimeLabel,
  TIME_LABEL_INVALID,
  utcDailyPointOfLabel,
} from "../time.ts";
import type { Capture, Endpoint, ReaderOutput, RowSink, SourceLineage, SourceTime } from "../types.ts";

/**
 * CoinGecko API v3 (`https://api.coingecko.com/api/v3`). Wire formats: shared/reference/upstreams.md §3.
 * Times are UTC: epoch ms in charts, ISO-8601 `Z` in `last_updated`.
 */
export const COINGECKO_BASE_URL = "https://api.coingecko.com/api/v3/";

/** CoinGecko is a primary, independent upstream family (aggregated market prices). */
export const COINGECKO_LINEAGE: SourceLineage = { family: "coingecko", derivedFrom: null };

const MarketRow = z.object({
  observed_at: z.number().int(),
  gecko_id: z.string().min(1),
  symbol: z.string(),
  price_usd: z.number().positive().nullable(),
  market_cap_usd: z.number().nonnegative().nullable(),
  volume_24h_usd: z.number().nonnegative().nullable(),
  circulating_supply: z.number().nonnegative().nullable(),
  last_updated_at: z.number().int().nullable(),
});
const MarketItem = z.looseObject({
  id: z.string(),
  symbol: z.string(),
  current_price: z.unknown(),
  market_cap: z.unknown(),
  total_volume: z.unknown(),
  circulating_supply: z.unknown(),
  last_updated: z.string().nullable().optional(),
});

/**
 * `GET /coins/markets?vs_currency=usd&category=stablecoins&per_page=250` — current price, market
 * cap, 24 h volume (USD) and circulating supply (coin units) per coin: a snapshot at the capture's
 * `observedAt` (Unix s); `last_updated_at` Unix s (UTC). A malformed item drops only itself.
 */
export const coinsMarketsEndpoint: Endpoint = {
  key: "coingecko.markets",
  source: "coingecko",
  lineage: COINGECKO_LINEAGE,
  time: { zone: "UTC", dailyBucket: "snapshot at observedAt (no daily points)" },
  mode: "snapshot",
  maxStalenessSec: 6 * 3600,
  payloadSchema: z.array(z.unknown()),
  rowSchema: MarketRow,
  table: {
    name: "raw_coingecko__markets",
    columns: {
      observed_at: "BIGINT",
      gecko_id: "VARCHAR",
      symbol: "VARCHAR",
      price_usd: "DOUBLE",
      market_cap_usd: "DOUBLE",
      volume_24h_usd: "DOUBLE",
      circulating_supply: "DOUBLE",
      last_updated_at: "BIGINT",
    },
  },
  toRows(payload: unknown[], capture: Capture, out?: RowSink) {
    const rc = new RowCollector(MarketRow, out);
    for (const item of payload) {
      const p = MarketItem.safeParse(item);
      if (!p.success) {
        rc.drop("market-item-invalid");
        continue;
      }
      const nums = [p.data.current_price, p.data.market_cap, p.data.total_volume, p.data.circulating_supply].map(
        toFiniteNumber,
      );
      if (nums.some((n) => n === undefined)) {
        rc.drop("market-value-invalid");
        continue;
      }
      const updated = p.data.last_updated ? Math.floor(Date.parse(p.data.last_updated) / 1000) : null;
      const price = nums[0];
      rc.addUnique(p.data.id, {
        observed_at: capture.observedAt,
        gecko_id: p.data.id,
        symbol: p.data.symbol,
        price_usd: price !== null && price !== undefined && price > 0 ? price : null,
        market_cap_usd: nums[1],
        volume_24h_usd: nums[2],
        circulating_supply: nums[3],
        last_updated_at: Number.isFinite(updated) ? updated : null,
      });
    }
    return rc.result();
  },
  fetchLive: (client) => client.getJson("coins/markets?vs_currency=usd&category=stablecoins&per_page=250&page=1"),
};

const ChartRow = z.object({
  gecko_id: z.string().min(1),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  price_usd: z.number().positive().nullable(),
  market_cap_usd: z.number().nonnegative().nullable(),
  volume_usd: z.number().nonnegative().nullable(),
});
const Series = z.array(z.unknown());

/**
 * `GET /coins/{id}/market_chart?vs_currency=usd&days=max&interval=daily` — daily USD price, market
 * cap and volume; timestamps in epoch ms (UTC). Daily rule: a point within ±1 h of 00:00 UTC is
 * that day's point (last one wins); others (the trailing "now" point) are dropped as
 * `off-day-boundary`. A malformed point drops only itself. A market cap of 0 (CoinGecko's
 * "unknown") is stored as null.
 */
export const marketChartEndpoint: Endpoint = {
  key: "coingecko.market_chart",
  source: "coingecko",
  lineage: COINGECKO_LINEAGE,
  time: { zone: "UTC", dailyBucket: "00:00 UTC point" },
  mode: "history",
  dateColumn: "date",
  maxStalenessSec: 36 * 3600,
  /** A daily market cap stands as the current supply for 3 days after its 00:00 UTC instant. */
  currentWindowSec: 3 * 86400,
  payloadSchema: z.looseObject({
    prices: Series.optional(),
    market_caps: Series.optional(),
    total_volumes: Series.optional(),
  }),
  rowSchema: ChartRow,
  table: {
    name: "raw_coingecko__market_chart",
    columns: {
      gecko_id: "VARCHAR",
      date: "VARCHAR",
      price_usd: "DOUBLE",
      market_cap_usd: "DOUBLE",
      volume_usd: "DOUBLE",
    },
  },
  toRows(
    payload: Record<"prices" | "market_caps" | "total_volumes", unknown[] | undefined>,
    capture: Capture,
    out?: RowSink,
  ) {
    const rc = new RowCollector(ChartRow, out);
    const byDay = new Map<
      string,
      { price_usd: number | null; market_cap_usd: number | null; volume_usd: number | null }
    >();
    const put = (series: unknown[] | undefined, field: "price_usd" | "market_cap_usd" | "volume_usd") => {
      for (const point of series ?? []) {
        if (!Array.isArray(point) || point.length < 2) {
          rc.drop(`${field}-point-invalid`);
          continue;
        }
        const ms = toFiniteNumber(point[0]);
        const n = toFiniteNumber(point[1]);
        if (ms === undefined || ms === null || n === undefined) {
          rc.drop(`${field}-point-invalid`);
          continue;
        }
        const aligned = alignDailyInstant(ms / 1000);
        if (!aligned.ok) {
          rc.drop(aligned.reason);
          continue;
        }
        const day = aligned.date;
        const row = byDay.get(day) ?? { price_usd: null, market_cap_usd: null, volume_usd: null };
        row[field] = n === null || (field !== "volume_usd" && n <= 0) ? null : n;
        byDay.set(day, row);
      }
    };
    put(payload.prices, "price_usd");
    put(payload.market_caps, "market_cap_usd");
    put(payload.total_volumes, "volume_usd");
    for (const [date, v] of [...byDay.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      rc.add({ gecko_id: capture.params.id, date, ...v });
    }
    return rc.result();
  },
  fetchLive: (client, params) =>
    client.getJson(`coins/${encodeURIComponent(params.id)}/market_chart?vs_currency=usd&days=max&interval=daily`),
};

// ---------------------------------------------------------------------------------------------
// Recorded-file readers (CoinGecko exports and scrapes) → `/coins/{id}/market_chart` payloads.

/** CoinGecko chart export: `snapped_at` labels `YYYY-MM-DD hh:mm:ss UTC` of 00:00 UTC points. */
export const COINGECKO_EXPORT_TIME: SourceTime = { zone: "UTC", dailyBucket: "00:00 UTC point" };

/**
 * Market-cap scrape (partrita): `date` is the scrape time (UTC), an observation at that instant, not a
 * label naming a daily point. A scrape counts from its instant: it stands for the first 00:00 UTC point
 * at or after it (an exact 00:00:00 scrape for that same point), never for an earlier one.
 */
export const COINGECKO_SCRAPE_TIME: SourceTime = {
  zone: "UTC",
  dailyBucket: "scrape instant; the first 00:00 UTC point at or after it (newest scrape ≤ the point wins)",
};

/** Drop reason of a scrape replaced by a later scrape ≤ the same 00:00 UTC point. */
export const SCRAPE_SUPERSEDED = "superseded-by-later-scrape";

/**
 * CoinGecko daily chart export CSV (`snapped_at` in `zone`, `price`, `market_cap`, `total_volume`
 * in USD) → market_chart payload (epoch ms, UTC, the exact instant of each label). Rows with a bad
 * label are dropped and counted.
 */
export function readCoingeckoChartExportCsv(geckoId: string, zone: string) {
  return (text: string): ReaderOutput => {
    const drops = new ReaderDrops();
    const prices: [number, string][] = [];
    const market_caps: [number, string][] = [];
    const total_volumes: [number, string][] = [];
    for (const r of readCsvRows(text, drops)) {
      const label = parseTimeLabel(r.snapped_at ?? "", zone);
      if (label?.kind !== "instant") {
        drops.drop(TIME_LABEL_INVALID);
        continue;
      }
      const ms = label.unixSec * 1000;
      prices.push([ms, r.price]);
      market_caps.push([ms, r.market_cap]);
      total_volumes.push([ms, r.total_volume]);
    }
    return drops.output([{ params: { id: geckoId }, payload: { prices, market_caps, total_volumes } }]);
  };
}

/**
 * Market caps (USD) scraped from CoinGecko charts (`date` = scrape time in `zone`, `coin_name`,
 * `market_cap`; UTF-8 BOM) → one market_chart payload per mapped coin (epoch ms of 00:00 UTC points).
 * No look-ahead: a scrape at instant t is the value of the first 00:00 UTC point ≥ t (a row at
 * 2025-12-26 10:52:25Z stands for 2025-12-27 00:00Z, not for 2025-12-26, so a build as of
 * 2025-12-26T00:00Z never sees it); of several scrapes ≤ one point the newest wins and the others are
 * dropped as `superseded-by-later-scrape`. Rows of unmapped coin names or with a bad label are counted,
 * not loaded. Source: partrita/stablecoin-tracker `stablecoin_marketcap.csv` (MANIFEST §5).
 */
export function readCoingeckoMarketCapScrapeCsv(nameToGeckoId: Record<string, string>, zone: string) {
  return (text: string): ReaderOutput => {
    const drops = new ReaderDrops();
    // gecko id → 00:00 UTC point (Unix s) → the newest scrape at or before it
    const series = new Map<string, Map<number, { at: number; marketCap: string }>>();
    for (const r of readCsvRows(text, drops)) {
      const gecko = nameToGeckoId[r.coin_name];
      if (!gecko) {
        drops.drop("coin-name-unmapped");
        continue;
      }
      const label = parseTimeLabel(r.date ?? "", zone);
      // a bare day label names its day's 00:00 UTC point (the day rule of docs/choices.md, "Time alignment"); a timestamp is an instant
      const at = label?.kind === "instant" ? label.unixSec : label ? utcDailyPointOfLabel(label) : null;
      if (at === null) {
        drops.drop(label ? OFF_DAY_BOUNDARY : TIME_LABEL_INVALID);
        continue;
      }
      const point = Math.ceil(at / DAY_SEC) * DAY_SEC;
      const points = series.get(gecko) ?? new Map<number, { at: number; marketCap: string }>();
      const held = points.get(point);
      if (held) drops.drop(SCRAPE_SUPERSEDED);
      if (!held || at >= held.at) points.set(point, { at, marketCap: r.market_cap });
      series.set(gecko, points);
    }
    return drops.output(
      [...series.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([id, points]) => ({
          params: { id },
          payload: {
            market_caps: [...points.entries()]
              .sort(([a], [b]) => a - b)
              .map(([point, v]): [number, string] => [point * 1000, v.marketCap]),
          },
        })),
    );
  };
}
