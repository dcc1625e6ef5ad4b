import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DateTime } from "luxon";
import Papa from "papaparse";
import { Db } from "../../build/duckdb.ts";
import { MARKET_CAP_SCRAPE_NAMES } from "../../pipelines/sources/recorded-captures.ts";
import type { AuditBuild } from "./as-of-audit.ts";
import { CAPTURE_DIR } from "./build-once.ts";

/**
 * As-of audit with VALUE checks (issue 29 part 3): for each recorded source, the test recomputes the
 * source's as-of view from the raw file itself — rows parsed here (not by the pipeline's readers),
 * placed at the instant they were observed, filtered by instant ≤ as-of, newest wins — and compares it
 * with the figure the build published straight from that source (a table of the build's
 * `ballast.duckdb`). Each check returns how many published values it compared and every mismatch as
 * text; `checked: 0` means the source has nothing ≤ as-of to publish at that day, and a published
 * value where the raw file has none ≤ as-of is a mismatch.
 *
 * Placement of raw rows (MANIFEST "Time zones and lineage"): CoinGecko/Alchemy exports are UTC 00:00
 * points; check-sked DefiLlama labels are US Eastern local times of the next 00:00 UTC point; an ECB
 * rate of day D is known from D 16:00 Europe/Berlin; BNB samples at their block time; Binance 1-min and
 * stablesafe 15-min bars at their end; a partrita scrape at its scrape instant (it can only stand for a
 * 00:00 UTC point at or after it); the DefiLlama list at its recording day 2025-09-07 00:00Z; the 2026-09-02 list at its scrape (11:57:41Z).
 */

/** One source's comparison at one as-of. */
export interface ValueCheck {
  source: string;
  /** Where the published value was read (table and filter). */
  published: string;
  checked: number;
  mismatches: string[];
}

const DAY = 86_400;
const raw = (rel: string) => readFileSync(join(CAPTURE_DIR, rel), "utf8").replace(/^\uFEFF/, "");
const csv = (rel: string, header = true) =>
  Papa.parse<Record<string, string>>(raw(rel), { header, skipEmptyLines: true }).data;
const utc = (s: string) => Date.parse(`${s.replace(" ", "T").replace(/ UTC$/, "")}Z`) / 1000;
const isoDay = (sec: number) => new Date(sec * 1000).toISOString().slice(0, 10);
/** Relative equality to 1e-9 (the pipeline divides and sums in DOUBLE). */
const same = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
/** A US Eastern label (`YYYY-MM-DD` or `YYYY-MM-DD hh:mm:ss`) → Unix s of the instant, or of 00:00 UTC inside the local day. */
function eastern(label: string): number {
  if (label.length === 10) {
    const start = DateTime.fromISO(label, { zone: "America/New_York" }).toSeconds();
    return Math.ceil(start / DAY) * DAY;
  }
  return DateTime.fromFormat(label, "yyyy-MM-dd HH:mm:ss", { zone: "America/New_York" }).toSeconds();
}
/** Unix s of a 00:00 UTC point when `sec` is within 1 s of one, else null (an intraday row). */
const dailyPoint = (sec: number) =>
  Math.abs(sec - Math.round(sec / DAY) * DAY) < 1 ? Math.round(sec / DAY) * DAY : null;

/** Newest entry with `at` ≤ asOf. */
function newest<T extends { at: number }>(rows: T[], asOf: number): T | undefined {
  let best: T | undefined;
  for (const r of rows) if (r.at <= asOf && (!best || r.at >= best.at)) best = r;
  return best;
}

export type Q = <T>(sql: string, params?: Record<string, unknown>) => Promise<T[]>;

// -------------------------------------------------------------------------------------------------
// partrita market-cap scrapes → supply_history_daily (source coingecko-market-cap)

/** The scrape's coin names → CoinGecko ids: curated data (not the logic under test), shared with the reader. */
const PARTRITA_NAMES = MARKET_CAP_SCRAPE_NAMES;
/** Last day of the bhemen CoinGecko exports: up to it USDT/USDC market caps are divided by the export's price. */
const EXPORT_LAST_DAY = "2024-05-06";

/** Raw scrapes per gecko id: `{at: scrape instant, value}`. */
export function partritaScrapes(): Map<string, { at: number; value: number }[]> {
  const out = new Map<string, { at: number; value: number }[]>();
  for (const r of csv("partrita-stablecoin-tracker/stablecoin_marketcap.csv")) {
    const id = PARTRITA_NAMES[r.coin_name];
    if (!id) continue;
    const list = out.get(id) ?? [];
    list.push({ at: utc(r.date), value: Number(r.market_cap) });
    out.set(id, list);
  }
  return out;
}

/**
 * partrita check: every `coingecko-market-cap` point of a USD coin in supply_history_daily (outside the
 * USDT/USDC export span, where the cap is divided by the export's price) divided by its
 * `level_adjustment` equals the newest raw scrape at or before min(point, as-of) and after the
 * previous point, divided by CoinGecko's price of that day (Alchemy's copy) when the raw file has one;
 * else by the coin's published consensus price at the point (`price_consensus_slots`), else at par. `q` queries the build's DuckDB; `asOf` Unix s.
 */
export async function partritaCheck(q: Q, asOf: number): Promise<ValueCheck> {
  const scrapes = partritaScrapes();
  const rows = await q<{ stablecoin_id: string; gecko_id: string; date: string; native: number; adj: number }>(
    `select h.stablecoin_id, c.gecko_id, h.date::varchar as date, h.circulating_native as native, h.level_adjustment as adj
     from supply_history_daily h join registry_coins c on c.id = h.stablecoin_id
     where h.source = 'coingecko-market-cap' and h.peg_type = 'peggedUSD'`,
  );
  const alchemyPrice = new Map(alchemyRows().map((a) => [`${a.gecko} ${isoDay(a.at)}`, a.value]));
  const slots = new Map<string, { at: number; price: number }[]>();
  for (const x of await q<{ stablecoin_id: string; at: number; price: number }>(
    `select stablecoin_id, slot_ts::double as at, price from price_consensus_slots
     where price > 0 and slot_ts <= $asOf and stablecoin_id in
       (select distinct stablecoin_id from supply_history_daily where source = 'coingecko-market-cap')`,
    { asOf },
  )) {
    const list = slots.get(x.stablecoin_id) ?? [];
    list.push({ at: Number(x.at), price: x.price });
    slots.set(x.stablecoin_id, list);
  }
  const mismatches: string[] = [];
  let checked = 0;
  for (const r of rows) {
    const list = scrapes.get(r.gecko_id);
    if (!list) continue;
    if ((r.gecko_id === "tether" || r.gecko_id === "usd-coin") && r.date <= EXPORT_LAST_DAY) continue;
    const point = Date.parse(`${r.date}T00:00:00Z`) / 1000;
    // the point's value: the newest scrape at or before min(point, as-of), observed after the previous point
    const want = newest(
      list.filter((s) => s.at > point - DAY && s.at <= point),
      asOf,
    );
    checked++;
    if (!want)
      mismatches.push(
        `${r.stablecoin_id} ${r.date}: published ${r.native}, raw has no scrape in (${r.date} −1 d, min(point, as-of)]`,
      );
    else {
      // units = market cap ÷ CoinGecko's price of the day (Alchemy's copy, ≤ 1.19), else ÷ the coin's
      // consensus price at the point (its last slot ≤ the point, less than a day old), else at par
      const price = alchemyPrice.get(`${r.gecko_id} ${r.date}`);
      const slot = newest(
        (slots.get(r.stablecoin_id) ?? []).filter((x) => x.at > point - DAY),
        Math.min(point, asOf),
      );
      const divisor = price !== undefined && price <= 1.19 ? price : (slot?.price ?? 1);
      const units = r.native / r.adj;
      if (!same(units, want.value / divisor))
        mismatches.push(
          `${r.stablecoin_id} ${r.date}: published ${units}, raw ${want.value} ÷ ${divisor} (scraped ${new Date(want.at * 1000).toISOString()})`,
        );
    }
  }
  return {
    source: "partrita stablecoin_marketcap.csv",
    published: "supply_history_daily coingecko-market-cap",
    checked,
    mismatches,
  };
}

// -------------------------------------------------------------------------------------------------
// daily price archives → price_history_daily

async function dailyPriceCheck(
  q: Q,
  asOf: number,
  source: string,
  label: string,
  rawRows: { gecko: string; at: number; value: number }[],
): Promise<ValueCheck> {
  const published = await q<{ gecko_id: string; date: string; price_usd: number }>(
    "select gecko_id, date::varchar as date, price_usd from price_history_daily where source = $source",
    { source },
  );
  const byKey = new Map(rawRows.filter((r) => r.at <= asOf).map((r) => [`${r.gecko} ${isoDay(r.at)}`, r.value]));
  const mismatches: string[] = [];
  for (const p of published) {
    const want = byKey.get(`${p.gecko_id} ${p.date}`);
    if (want === undefined)
      mismatches.push(`${p.gecko_id} ${p.date}: published ${p.price_usd}, no raw row at that point ≤ as-of`);
    else if (!same(p.price_usd, want))
      mismatches.push(`${p.gecko_id} ${p.date}: published ${p.price_usd}, raw ${want}`);
  }
  // the newest point ≤ as-of of each coin is published (nothing ≤ as-of left out at the head)
  const geckos = new Set(rawRows.map((r) => r.gecko));
  for (const g of geckos) {
    const want = newest(
      rawRows.filter((r) => r.gecko === g && r.value > 0),
      asOf,
    );
    const head = published
      .filter((p) => p.gecko_id === g)
      .reduce<string | null>((m, p) => (m && m > p.date ? m : p.date), null);
    if (want && head !== isoDay(want.at) && published.length > 0)
      mismatches.push(`${g}: newest published day ${head}, newest raw point ≤ as-of ${isoDay(want.at)}`);
  }
  return { source: label, published: `price_history_daily source=${source}`, checked: published.length, mismatches };
}

function coingeckoExportRows() {
  return [
    ["tether", "usdt_history.csv"],
    ["usd-coin", "usdc_history.csv"],
  ]
    .flatMap(([gecko, f]) =>
      csv(`bhemen-crypto-insights/coingecko-usdc-usdt/${f}`).map((r) => ({
        gecko,
        // CoinGecko's daily snapshot label: within ±1 h of 00:00 UTC it is that point (docs/choices.md "Time
        // alignment"; 2018-01-30 and 2018-02-08 are snapped at 00:05:03)
        at: Math.round(utc(r.snapped_at) / DAY) * DAY,
        off: Math.abs(utc(r.snapped_at) - Math.round(utc(r.snapped_at) / DAY) * DAY),
        value: Number(r.price),
      })),
    )
    .filter((r) => r.off <= 3600 && r.value > 0);
}

function checkSkedPriceRows() {
  return csv("check-sked-crypto-data-resources/stablecoin_prices.csv").flatMap((r) =>
    Object.entries(r)
      .filter(([k, v]) => k !== "Date" && v !== "" && Number(v) > 0)
      .map(([gecko, v]) => ({ gecko, at: eastern(r.Date), value: Number(v) })),
  );
}

function alchemyRows() {
  const files: Record<string, string> = {
    USDT: "tether",
    USDC: "usd-coin",
    DAI: "dai",
    USDe: "ethena-usde",
    USDS: "usds",
  };
  return Object.entries(files).flatMap(([f, gecko]) =>
    csv(`bhemen-crypto-insights/stablecoin_prices/${f}.csv`)
      .filter((r) => /^\d{4}-\d{2}-\d{2}$/.test(r.timestamp))
      .map((r) => ({ gecko, at: utc(`${r.timestamp} 00:00:00`), value: Number(r.price) }))
      .filter((r) => r.value > 0),
  );
}

// -------------------------------------------------------------------------------------------------
// check-sked supply charts

async function totalChartCheck(q: Q, asOf: number): Promise<ValueCheck> {
  const rawRows = csv("check-sked-crypto-data-resources/total_stablecoins_all_chains.csv").map((r) => ({
    at: eastern(r.Date),
    value: Number(r["Total Circulating ($)"]),
  }));
  const want = newest(rawRows, asOf);
  const [head] = await q<{ date: string; usd: number }>(
    `select date::varchar as date, circulating_usd as usd from total_supply_daily
     where aggregate_universe = 'defillama-all' and peg_type = 'total' order by date desc limit 1`,
  );
  const mismatches: string[] = [];
  if (!want && head) mismatches.push(`published ${head.date} ${head.usd}, raw has no row ≤ as-of`);
  if (want && !head) mismatches.push(`raw ${isoDay(want.at)} ${want.value} ≤ as-of, nothing published`);
  if (want && head && (head.date !== isoDay(want.at) || !same(head.usd, want.value)))
    mismatches.push(`published ${head.date} ${head.usd}, raw as-of view ${isoDay(want.at)} ${want.value}`);
  return {
    source: "check-sked total_stablecoins_all_chains.csv",
    published: "total_supply_daily defillama-all total (newest day)",
    checked: head ? 1 : 0,
    mismatches,
  };
}

async function usdcByChainCheck(q: Q, asOf: number): Promise<ValueCheck> {
  const rawRows = csv("check-sked-crypto-data-resources/stablecoin_USDC_circulating_by_chain.csv")
    .map((r) => ({
      at: eastern(r.Date),
      value: Object.entries(r)
        .filter(([k, v]) => k.endsWith("_Circulating") && v !== "")
        .reduce((s, [, v]) => s + Number(v), 0),
    }))
    .filter((r) => dailyPoint(r.at) !== null);
  const want = newest(rawRows, asOf);
  const [head] = await q<{ date: string; native: number }>(
    `select date::varchar as date, circulating_native as native from supply_history_daily
     where stablecoin_id = 'usdc-circle' and source = 'defillama-detail' order by date desc limit 1`,
  );
  const mismatches: string[] = [];
  if (!want && head) mismatches.push(`published ${head.date} ${head.native}, raw has no row ≤ as-of`);
  if (want && head && (head.date !== isoDay(want.at) || Math.abs(head.native - want.value) > 1e-6 * want.value))
    mismatches.push(`published ${head.date} ${head.native}, raw as-of view ${isoDay(want.at)} ${want.value}`);
  return {
    source: "check-sked stablecoin_USDC_circulating_by_chain.csv",
    published: "supply_history_daily usdc-circle defillama-detail (newest day)",
    checked: head ? 1 : 0,
    mismatches,
  };
}

// -------------------------------------------------------------------------------------------------
// ECB reference rates → fx_rates_daily

async function ecbCheck(q: Q, asOf: number): Promise<ValueCheck> {
  const rawRows = csv("ecb-eurofxref/eurofxref-hist.csv")
    .filter((r) => r.USD && r.USD !== "N/A")
    .map((r) => ({
      day: r.Date,
      at: DateTime.fromISO(`${r.Date}T16:00:00`, { zone: "Europe/Berlin" }).toSeconds(),
      value: Number(r.USD),
    }));
  const want = newest(rawRows, asOf);
  const [head] = await q<{ date: string; usd: number; published_at: number }>(
    `select date::varchar as date, usd_per_unit as usd, published_at from fx_rates_daily
     where currency = 'EUR' and published_at <= $asOf order by published_at desc limit 1`,
    { asOf },
  );
  const [late] = await q<{ n: number }>(
    "select count(*)::integer as n from fx_rates_daily where published_at > $asOf",
    { asOf },
  );
  const mismatches: string[] = [];
  if (late.n > 0) mismatches.push(`${late.n} rates published after as-of`);
  if (!want && head) mismatches.push(`published ${head.date} ${head.usd}, raw has no rate published ≤ as-of`);
  if (want && (!head || head.date !== want.day || !same(head.usd, want.value)))
    mismatches.push(`published ${head?.date} ${head?.usd}, raw as-of view ${want.day} ${want.value}`);
  return {
    source: "ECB eurofxref-hist.csv",
    published: "fx_rates_daily EUR (newest published ≤ as-of)",
    checked: head ? 1 : 0,
    mismatches,
  };
}

// -------------------------------------------------------------------------------------------------
// BNB-chain totalSupply samples → chain_supply_samples

async function bnbSamplesCheck(q: Q, asOf: number): Promise<ValueCheck> {
  const mismatches: string[] = [];
  let checked = 0;
  for (const f of ["BSC-USD", "BUSD", "FDUSD", "USDC"]) {
    const rows = csv(`bhemen-crypto-insights/bnb-supply/${f}.csv`).map((r) => ({
      address: r.address.toLowerCase(),
      at: utc(r.ts),
      block: Number(r.block),
      native: Number(BigInt(r.supply) / 10n ** 12n) / 1e6,
    }));
    const want = newest(rows, asOf);
    const [head] = await q<{ block_number: number; observed_at: number; supply_native: number }>(
      `select block_number::double as block_number, observed_at::double as observed_at, supply_native from chain_supply_samples
       where chain_id = 'bsc' and lower(contract_address) = $address order by observed_at desc, block_number desc limit 1`,
      { address: rows[0].address },
    );
    if (head) checked++;
    if (!want && head) mismatches.push(`${f}: published block ${head.block_number}, raw has no sample ≤ as-of`);
    if (want && !head) mismatches.push(`${f}: raw block ${want.block} ≤ as-of, nothing published`);
    if (
      want &&
      head &&
      (head.block_number !== want.block || Math.abs(head.supply_native - want.native) > 1e-6 * Math.max(1, want.native))
    )
      mismatches.push(
        `${f}: published block ${head.block_number} ${head.supply_native}, raw as-of view block ${want.block} ${want.native}`,
      );
  }
  return {
    source: "bhemen bnb-supply/*.csv",
    published: "chain_supply_samples bsc (newest per contract)",
    checked,
    mismatches,
  };
}

// -------------------------------------------------------------------------------------------------
// intraday bars → price_consensus_slots quotes (last quote of a source in its 15-minute slot)

const SLOT = 900;
type SlotRow = { slot_ts: number; quotes_json: string };
const quoteOf = (s: SlotRow, source: string) =>
  (JSON.parse(s.quotes_json) as [string, string, number][]).find((x) => x[0] === source)?.[2];

async function binanceCheck(q: Q, asOf: number): Promise<ValueCheck> {
  const dir = join(CAPTURE_DIR, "binance-vision-usdc-svb-2023");
  const bars = readdirSync(dir)
    .filter((f) => /^USDCUSDT-1m-.*\.csv$/.test(f))
    .flatMap((f) =>
      csv(`binance-vision-usdc-svb-2023/${f}`, false).map((r) => {
        const cells = r as unknown as string[];
        return { at: Math.round((Number(cells[6]) + 1) / 1000), close: Number(cells[4]) };
      }),
    );
  const want = newest(bars, asOf);
  const slots = await q<SlotRow>(
    `select slot_ts::double as slot_ts, quotes_json from price_consensus_slots
     where stablecoin_id = 'usdc-circle' and quotes_json like '%"binance"%' order by slot_ts desc limit 1`,
  );
  const mismatches: string[] = [];
  const head = slots[0];
  if (!want && head) mismatches.push(`published binance quote at ${head.slot_ts}, raw has no bar ending ≤ as-of`);
  if (want && !head) mismatches.push(`raw bar ending ${want.at} ≤ as-of, no binance quote published`);
  if (want && head) {
    // the newest slot's quote is the close of the last bar in that slot, in USD (close × USDT/USD of its day)
    const slotOfWant = Math.ceil(want.at / SLOT) * SLOT;
    const last = newest(
      bars.filter((b) => b.at > head.slot_ts - SLOT),
      head.slot_ts,
    );
    const [usdt] = await q<{ p: number }>(
      "select median(price_usd) as p from price_history_daily where gecko_id = 'tether' and date = $day::date",
      { day: isoDay(head.slot_ts - 1) },
    );
    const quote = quoteOf(head, "binance");
    if (head.slot_ts !== slotOfWant)
      mismatches.push(`newest binance slot ${head.slot_ts}, raw as-of view slot ${slotOfWant}`);
    if (!last || quote === undefined || !same(quote, last.close * usdt.p))
      mismatches.push(`slot ${head.slot_ts}: published ${quote}, raw close ${last?.close} × USDT ${usdt.p}`);
  }
  return {
    source: "binance-vision USDCUSDT 1m",
    published: "price_consensus_slots usdc-circle binance (newest slot)",
    checked: head ? 1 : 0,
    mismatches,
  };
}

async function stablesafeCheck(q: Q, asOf: number): Promise<ValueCheck> {
  const doc = JSON.parse(raw("bertrandbuild-stablesafe/data_usdc_large_depeg_2023.json")) as {
    data: { dt: string; c: number }[];
  };
  const bars = doc.data.map((b) => ({ at: Date.parse(b.dt) / 1000 + SLOT, close: b.c }));
  // the newest bar ≤ as-of whose slot is not a 00:00 UTC point (there a daily CoinGecko export row shares the label)
  const want = newest(
    bars.filter((b) => b.at % DAY !== 0),
    asOf,
  );
  // within the archive's span (a later `coingecko` quote is the recorded /coins/markets snapshot of 2025-09-11)
  const slots = await q<SlotRow>(
    `select slot_ts::double as slot_ts, quotes_json from price_consensus_slots
     where stablecoin_id = 'usdc-circle' and quotes_json like '%"coingecko"%' and slot_ts % 86400 <> 0
       and slot_ts between $first and $last
     order by slot_ts desc limit 1`,
    { first: Math.min(...bars.map((b) => b.at)), last: Math.max(...bars.map((b) => b.at)) },
  );
  const head = slots[0];
  const mismatches: string[] = [];
  if (!want && head) mismatches.push(`published intraday coingecko quote at ${head.slot_ts}, raw has no bar ≤ as-of`);
  if (want && !head) mismatches.push(`raw bar ending ${want.at} ≤ as-of, no intraday coingecko quote published`);
  if (want && head) {
    const quote = quoteOf(head, "coingecko");
    if (head.slot_ts !== want.at || quote === undefined || !same(quote, want.close))
      mismatches.push(`published slot ${head.slot_ts} ${quote}, raw as-of view bar ending ${want.at} ${want.close}`);
  }
  return {
    source: "stablesafe data_usdc_large_depeg_2023.json",
    published: "price_consensus_slots usdc-circle coingecko (newest intraday slot)",
    checked: head ? 1 : 0,
    mismatches,
  };
}

// -------------------------------------------------------------------------------------------------
// DefiLlama list recorded 2025-09-07 → stablecoins (supply_source defillama)

const LIST_AT = Date.parse("2025-09-07T00:00:00Z") / 1000;

async function defillamaListCheck(q: Q, asOf: number): Promise<ValueCheck> {
  const list = JSON.parse(raw("zacheryglass-stablecoinwatch/defillama_raw_output.json")) as {
    peggedAssets: { symbol: string; gecko_id: string | null; circulating: { peggedUSD?: number } }[];
  };
  const usdt = list.peggedAssets.find((a) => a.gecko_id === "tether");
  const rows = await q<{ stablecoin_id: string; supply_date: string | null; current_native: number | null }>(
    `select stablecoin_id, supply_date::varchar as supply_date, current_native from stablecoins where supply_source = 'defillama'`,
  );
  const [persisted] = await q<{ n: number }>(
    "select count(*)::integer as n from supply_history_daily where source = 'defillama-list'",
  );
  const mismatches: string[] = [];
  if (asOf < LIST_AT) {
    if (rows.length > 0)
      mismatches.push(`${rows.length} coins with supply_source defillama before the list was recorded`);
    if (persisted.n > 0) mismatches.push(`${persisted.n} defillama-list history points before the list was recorded`);
    return {
      source: "DefiLlama list 2025-09-07",
      published: "stablecoins supply_source=defillama",
      checked: 0,
      mismatches,
    };
  }
  // a later recorded list may serve some coins; none may be dated after as-of
  const asOfDay = isoDay(asOf);
  for (const r of rows)
    if (!r.supply_date || r.supply_date > asOfDay) mismatches.push(`${r.stablecoin_id}: supply_date ${r.supply_date}`);
  const fromList = rows.filter((r) => r.supply_date === "2025-09-07");
  const t = fromList.find((r) => r.stablecoin_id === "usdt-tether");
  if (
    t &&
    t.current_native !== null &&
    (!usdt?.circulating.peggedUSD || !same(t.current_native, usdt.circulating.peggedUSD))
  )
    mismatches.push(`usdt-tether: published ${t.current_native}, raw ${usdt?.circulating.peggedUSD}`);
  return {
    source: "DefiLlama list 2025-09-07",
    published: "stablecoins supply_source=defillama",
    checked: fromList.length,
    mismatches,
  };
}

// -------------------------------------------------------------------------------------------------
// DefiLlama list of 2026-09-02 (open-defi-data, normalised; observed at its scrapedAt) → stablecoins

/** The list's observation: its newest `scrapedAt` (2026-09-02T11:57:40.725Z), to the next whole second. */
const LIST_2026_PATH = "conorscode-open-defi-data/stablecoins.2026-09-02.json";

async function openDefiListCheck(q: Q, asOf: number): Promise<ValueCheck> {
  const list = JSON.parse(raw(LIST_2026_PATH)) as {
    id: string;
    pegType: string;
    circulatingUsd: number | null;
    price: number | null;
    scrapedAt: string;
  }[];
  const observedAt = Math.ceil(Math.max(...list.map((r) => Date.parse(r.scrapedAt))) / 1000);
  // llamaId → gecko id from DefiLlama's own metadata (the list carries no gecko_id)
  const meta = JSON.parse(raw("defillama-peggedassets-server/peggedData.json")) as {
    id: string;
    gecko_id?: string | null;
  }[];
  const geckoOf = new Map(meta.filter((m) => m.gecko_id).map((m) => [String(m.id), String(m.gecko_id)]));
  const rows = await q<{ gecko_id: string | null; supply_date: string | null; current_native: number | null }>(
    `select gecko_id, supply_date::varchar as supply_date, current_native from stablecoins
     where supply_source = 'defillama' and supply_date >= '2026-09-02'`,
  );
  const mismatches: string[] = [];
  const base = {
    source: "DefiLlama list 2026-09-02",
    published: "stablecoins supply_source=defillama, supply_date 2026-09-02",
  };
  if (asOf < observedAt) {
    if (rows.length) mismatches.push(`${rows.length} coins served from the 2026-09-02 list before its scrape`);
    return { ...base, checked: 0, mismatches };
  }
  // USD-valued list (since 2025-12-01): native units = circulatingUsd ÷ the list's price (par without one)
  const expected = new Map<string, number>();
  for (const r of list) {
    const gecko = geckoOf.get(r.id);
    if (r.pegType !== "peggedUSD" || r.circulatingUsd === null || !gecko) continue;
    expected.set(gecko, r.price && r.price > 0 ? r.circulatingUsd / r.price : r.circulatingUsd);
  }
  let checked = 0;
  for (const r of rows) {
    const want = r.gecko_id ? expected.get(r.gecko_id) : undefined;
    if (want === undefined || r.current_native === null) continue;
    checked++;
    if (!same(r.current_native, want)) mismatches.push(`${r.gecko_id}: published ${r.current_native}, raw ${want}`);
  }
  return { ...base, checked, mismatches };
}

/**
 * Runs every value check on one audit build (its `ballast.duckdb`, read-only). Returns one ValueCheck
 * per source, in a fixed order. Throws when the DuckDB file cannot be opened or a query fails.
 */
export async function checkAsOfValues(build: AuditBuild): Promise<ValueCheck[]> {
  const asOf = build.manifest.asOf;
  const db = await Db.open(join(build.buildDir, "ballast.duckdb"), { access_mode: "READ_ONLY" });
  const q: Q = (sql, params) => db.all(sql, params as never);
  try {
    return [
      await partritaCheck(q, asOf),
      await dailyPriceCheck(q, asOf, "coingecko", "bhemen CoinGecko USDT/USDC exports", coingeckoExportRows()),
      await dailyPriceCheck(q, asOf, "defillama-prices", "check-sked stablecoin_prices.csv", checkSkedPriceRows()),
      await dailyPriceCheck(q, asOf, "alchemy", "bhemen Alchemy stablecoin_prices/*.csv", alchemyRows()),
      await totalChartCheck(q, asOf),
      await usdcByChainCheck(q, asOf),
      await ecbCheck(q, asOf),
      await bnbSamplesCheck(q, asOf),
      await binanceCheck(q, asOf),
      await stablesafeCheck(q, asOf),
      await defillamaListCheck(q, asOf),
      await openDefiListCheck(q, asOf),
    ];
  } finally {
    db.close();
  }
}

/**
 * Fresh or null (issue 29 part 2) on a published build's `ballast.duckdb`: every current figure that is
 * not null is within its source's window of `asOf` (Unix s): supply a daily point ≤ 3 days old (a list's
 * day within its 2-day window falls inside it), chain amounts likewise, an ECB rate valuing supply as
 * `fx` ≤ 4 days older than the supply's day, a price observed ≤ 48 h before; and a null current supply
 * always names its reason. Returns one line per offending row (empty when fresh).
 */
export async function freshnessProblems(build: AuditBuild): Promise<string[]> {
  const asOf = build.manifest.asOf;
  const db = await Db.open(join(build.buildDir, "ballast.duckdb"), { access_mode: "READ_ONLY" });
  try {
    const rows = (sql: string) =>
      db.all<Record<string, unknown>>(sql, sql.includes("$asOf") ? ({ asOf } as never) : undefined);
    const problems: string[] = [];
    const add = (what: string, list: Record<string, unknown>[]) =>
      problems.push(
        ...list.map((r) => `${what}: ${JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? Number(v) : v))}`),
      );
    add(
      "supply past its window",
      await rows(`select stablecoin_id, supply_date::varchar as supply_date, supply_source from stablecoins
        where circulating_usd is not null and $asOf - epoch(supply_date) > 3 * 86400`),
    );
    add(
      "chain amount past its window",
      await rows(`select stablecoin_id, chain_id, date::varchar as date from stablecoin_chain_supply
        where $asOf - epoch(date) > 3 * 86400`),
    );
    add(
      "fx rate past its window",
      await rows(
        "select stablecoin_id, fx_rate_age_days from stablecoins where valuation_basis = 'fx' and fx_rate_age_days > 4",
      ),
    );
    add(
      "price past its window",
      await rows(`select stablecoin_id, price_observed_at from stablecoins
        where price is not null and $asOf - price_observed_at > 2 * 86400`),
    );
    add(
      "null supply without a reason",
      await rows(
        "select stablecoin_id from stablecoins where circulating_usd is null and supply_unavailable_reason is null",
      ),
    );
    return problems;
  } finally {
    db.close();
  }
}

/**
 * The recorded archive sources (labels of {@link checkAsOfValues}) whose history covers the as-of
 * days before 2023 (2022-05-12, and 2023-03-01 of test/e2e/as-of-history.test.ts): each must have
 * rows at or before those days to compare.
 */
export const EARLY_HISTORY_SOURCES = [
  "partrita stablecoin_marketcap.csv",
  "bhemen CoinGecko USDT/USDC exports",
  "check-sked stablecoin_prices.csv",
  "bhemen Alchemy stablecoin_prices/*.csv",
  "check-sked total_stablecoins_all_chains.csv",
  "check-sked stablecoin_USDC_circulating_by_chain.csv",
  "ECB eurofxref-hist.csv",
  "bhemen bnb-supply/*.csv",
] as const;
