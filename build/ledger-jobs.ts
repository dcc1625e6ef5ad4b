import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import { ONCHAIN_EVENT_COLUMNS, type OnchainEventRow } from "../pipelines/onchain/contract.ts";
import { LedgerStore } from "../pipelines/onchain/ledger-store.ts";
import { loadRegistry } from "../pipelines/registry/registry.ts";
import { BadInput, type CapturedHistory, runHistoryBackfill } from "./backfill-history.ts";
import { loadBuildConfig } from "./config.ts";
import { Db } from "./duckdb.ts";
import { discoverModels } from "./models.ts";
import { must } from "../lib/must.ts";
import { recordedOnchainRows } from "./onchain-cli.ts";
import { runBuild } from "./run-build.ts";
import { createSink } from "./sinks/create-sink.ts";
import type { Sink } from "./sinks/sink.ts";
import { prepareBuildDb } from "./stages/load.ts";

/**
 * Ledger jobs of the operator lane (spec 4.5), run as job child processes by api/routes/ledger-jobs.ts
 * through build/ledger-jobs-cli.ts:
 * - `mint-burn-prices` (POST /api/backfill-mint-burn-prices): values the mint/burn rows the serving build
 *   could not value, by capturing their coins' CoinGecko price history (the history backfill machinery
 *   of build/backfill-history.ts, with provenance) and publishing a new build;
 * - `reclassify-atomic-roundtrips` (POST /api/reclassify-atomic-roundtrips): runs the build's own
 *   mint/burn classifier (pipelines/models/marts/mint_burn_events.sql) over the ledger's and the recorded
 *   logs' events and reports, 1000 same-transaction groups per call, the rows whose atomic round-trip
 *   classification differs from the serving build's.
 */

const MODELS = resolve(import.meta.dirname, "../pipelines/models");
/** The SQL of the build's model `name`, wherever discovery finds it (a source folder's staging model included). */
const model = (name: string) =>
  must(
    discoverModels(MODELS).find((m) => m.name === name),
    `model ${name}`,
  ).sql;
const quoted = (path: string) => `'${path.replace(/'/g, "''")}'`;
const utcDay = (sec: number) => new Date(sec * 1000).toISOString().slice(0, 10);

/** The serving build of `sink` (`latest.json`): id and as-of (Unix s), or null when nothing is published. */
async function servingBuild(sink: Sink): Promise<{ buildId: string; asOf: number } | null> {
  const raw = await sink.get("latest.json");
  if (!raw) return null;
  const p = JSON.parse(Buffer.from(raw).toString("utf8")) as { buildId: string; asOf: number };
  return { buildId: p.buildId, asOf: p.asOf };
}

/**
 * Runs `query` over the `mint_burn_events` table of build `buildId`'s published DuckDB file
 * (`builds/<id>/ballast.duckdb`, copied to a temp file and attached read-only as `served`).
 * Null when the build has no DuckDB file.
 */
async function servedRows<T>(
  sink: Sink,
  buildId: string,
  query: string,
  values: Record<string, string> = {},
): Promise<T[] | null> {
  const bytes = await sink.get(`builds/${buildId}/ballast.duckdb`);
  if (!bytes) return null;
  const dir = mkdtempSync(join(tmpdir(), "ballast-ledger-job-"));
  const db = await Db.open();
  try {
    const file = join(dir, "served.duckdb");
    writeFileSync(file, bytes);
    await db.exec(`attach ${quoted(file)} as served (read_only)`);
    return await db.all<T>(query, values);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------
// backfill-mint-burn-prices

/** Per coin counts of a mint-burn-prices run. */
export interface MintBurnPricesCoin {
  stablecoinId: string;
  /** CoinGecko id the price history was captured for; null when the registry has none (not captured). */
  geckoId: string | null;
  /** Rows the serving build had without a USD value. */
  unpriced: number;
  /** Of those, rows the new build values. */
  valued: number;
  /** Of the valued rows, those whose event day (UTC) has a price point in the new capture. */
  audited: number;
}

/** stdout of `mint-burn-prices` (the spec's fields first). */
export interface MintBurnPricesResult {
  /** Rows whose USD value the new build changed from null to a value (= rowsValued). */
  totalUpdated: number;
  rowsValued: number;
  rowsAudited: number;
  /** Rows of the unpriced set the new build still cannot value. */
  rowsStillUnpriced: number;
  /** Rows of the unpriced set without a captured price point of their day (valued or not). */
  rowsStillMissingAudit: number;
  coins: MintBurnPricesCoin[];
  /** As-of (Unix s) of the serving build and of the new one. */
  asOf: number | null;
  buildBefore: string | null;
  buildAfter: string | null;
  /** The capture (history backfill result: captured[], provenance, dated snapshots rebuilt); null when nothing was captured. */
  capture: Awaited<ReturnType<typeof runHistoryBackfill>> | null;
}

interface UnpricedRow {
  id: string;
  stablecoin_id: string;
  ts: number;
}

const UNPRICED_SQL = `select id, stablecoin_id, ts::bigint as ts from served.mint_burn_events
  where amount_usd_at_event is null and amount_native is not null order by stablecoin_id, ts, id`;

/** UTC days with a price point in a stored `coingecko.market_chart` capture (`prices` series). */
async function capturedDays(sink: Sink, c: CapturedHistory): Promise<Set<string>> {
  const bytes = await sink.get(c.key);
  const days = new Set<string>();
  if (!bytes) return days;
  const stored = JSON.parse(gunzipSync(bytes).toString("utf8")) as { payload: { prices?: [number, number | null][] } };
  for (const [ms, v] of stored.payload.prices ?? []) if (v !== null) days.add(utcDay(Math.floor(ms / 1000)));
  return days;
}

/**
 * `mint-burn-prices --to <YYYY-MM-DD> [--ledger PATH]`: the serving build's mint/burn rows without a USD
 * value (`amount_usd_at_event` null with a known amount: no price rule for the coin on the event day)
 * → the CoinGecko market chart of their coins captured through the live client (runHistoryBackfill
 * `cg-prices`: stored under `raw/coingecko/<day>/`, provenance in `backfills/`, dated snapshots of the
 * window rebuilt where unpublished) → a new build as of the serving build's as-of (its own build id;
 * dated objects already published are kept) → the counts. Nothing unpriced: nothing captured or built.
 * @throws BadInput without a serving build or without `--to`.
 */
export async function runMintBurnPrices(args: Record<string, string>, env: NodeJS.ProcessEnv = process.env) {
  const to = args.to;
  if (!to || !/^\d{4}-\d{2}-\d{2}$/.test(to)) throw new BadInput("--to: required (YYYY-MM-DD)");
  const config = loadBuildConfig(env);
  const sink = createSink(config);
  const before = await servingBuild(sink);
  if (!before) throw new BadInput("no published build: nothing to value yet");
  const unpriced = (await servedRows<UnpricedRow>(sink, before.buildId, UNPRICED_SQL)) ?? [];
  const result: MintBurnPricesResult = {
    totalUpdated: 0,
    rowsValued: 0,
    rowsAudited: 0,
    rowsStillUnpriced: unpriced.length,
    rowsStillMissingAudit: unpriced.length,
    coins: [],
    asOf: before.asOf,
    buildBefore: before.buildId,
    buildAfter: null,
    capture: null,
  };
  if (!unpriced.length) return result;
  const registry = loadRegistry();
  const ids = [...new Set(unpriced.map((r) => r.stablecoin_id))].sort();
  const gecko = new Map(ids.map((id) => [id, registry.coins.find((c) => c.id === id)?.geckoId ?? null]));
  const capturable = ids.filter((id) => gecko.get(id));
  if (capturable.length)
    result.capture = await runHistoryBackfill(["cg-prices", "--coins", capturable.join(","), "--to", to], env);
  const days = new Map<string, Set<string>>();
  for (const c of result.capture?.captured ?? []) {
    const coin = capturable.find((id) => gecko.get(id) === c.params.id);
    if (coin) days.set(coin, await capturedDays(sink, c));
  }
  let valued = new Set<string>();
  if (result.capture?.captured.length) {
    const built = await runBuild({
      asOf: before.asOf,
      captureDir: config.BALLAST_CAPTURE_DIR,
      sink,
      warehousePath: config.BALLAST_WAREHOUSE ?? join(config.BALLAST_DATA_DIR, "warehouse.duckdb"),
      keepBuilds: config.BALLAST_KEEP_BUILDS,
      onchainLedgerPath:
        args.ledger ?? config.BALLAST_ONCHAIN_LEDGER ?? join(config.BALLAST_DATA_DIR, "onchain.duckdb"),
      scratchDir: config.BALLAST_SCRATCH_DIR,
    });
    result.buildAfter = built.manifest.buildId;
    const rows =
      (await servedRows<{ id: string }>(
        sink,
        built.manifest.buildId,
        "select id from served.mint_burn_events where amount_usd_at_event is not null order by id",
      )) ?? [];
    valued = new Set(rows.map((r) => r.id));
  }
  for (const id of ids) {
    const mine = unpriced.filter((r) => r.stablecoin_id === id);
    const ok = mine.filter((r) => valued.has(r.id));
    const seen = days.get(id);
    result.coins.push({
      stablecoinId: id,
      geckoId: gecko.get(id) ?? null,
      unpriced: mine.length,
      valued: ok.length,
      audited: seen ? ok.filter((r) => seen.has(utcDay(r.ts))).length : 0,
    });
  }
  result.rowsValued = result.coins.reduce((s, c) => s + c.valued, 0);
  result.totalUpdated = result.rowsValued;
  result.rowsAudited = result.coins.reduce((s, c) => s + c.audited, 0);
  result.rowsStillUnpriced = unpriced.length - result.rowsValued;
  result.rowsStillMissingAudit = unpriced.length - result.rowsAudited;
  return result;
}

// ---------------------------------------------------------------------------------------------------
// reclassify-atomic-roundtrips

/** Groups (same-transaction mint+burn sets of one coin) per call (spec: 1000). */
export const RECLASSIFY_BATCH = 1000;
/** Where the job keeps its cursor between calls (in the data dir's sink). */
export const RECLASSIFY_CURSOR_KEY = "jobs/reclassify-atomic-roundtrips.json";

/** One row whose atomic round-trip classification differs from the serving build's. */
export interface RoundtripChange {
  /** Row id `{chainId}-{txHash}-{logIndex}`. */
  id: string;
  stablecoinId: string;
  /** Unix s of the event's UTC hour (the hourly flows bucket it moves). */
  hourTs: number;
  /** The serving build's flow type; null when it does not publish the row. */
  before: string | null;
  after: "atomic_roundtrip" | "not_atomic";
  /** The row it pairs with when `after` is atomic_roundtrip. */
  pairId: string | null;
}

/** stdout of `reclassify-atomic-roundtrips` (the spec's fields first). */
export interface ReclassifyResult {
  done: boolean;
  updated: number;
  hoursRecalculated: number;
  batchSize: number;
  /** Groups classified by this call, and in total. */
  groups: number;
  groupsTotal: number;
  /** Key (`chain|tx|coin`) of the last group of this call; null once done (the next call starts over). */
  cursor: string | null;
  changes: RoundtripChange[];
}

interface ClassifiedRow {
  id: string;
  stablecoin_id: string;
  chain_id: string;
  tx_hash: string;
  ts: number;
  flow_type: string;
  roundtrip_pair_id: string | null;
  group_key: string;
}

/**
 * Loads `rows` (ledger rows win over recorded ones of the same id, as in builds) into an in-memory
 * DuckDB with the registry and runs the build's staging and mint/burn models over them (valuation
 * left out: it does not change a classification). Returns the mint/burn rows of same-transaction
 * mint+burn groups with their flow type, ordered by group key then id.
 */
async function classifyGroups(rows: OnchainEventRow[], asOf: number): Promise<ClassifiedRow[]> {
  const db = await Db.open();
  try {
    await prepareBuildDb(db, asOf, loadRegistry());
    await db.loadRows(
      "raw_onchain_events",
      { ...ONCHAIN_EVENT_COLUMNS, _observed_at: "BIGINT" },
      rows.map((r) => ({ ...r, _observed_at: 0 })),
    );
    await db.exec(`create table stg_onchain__events as ${model("stg_onchain__events")}`);
    // The classifier reads int_onchain_events_valued: the staged events; USD columns are not needed here.
    await db.exec(`create view int_onchain_events_valued as select *, null::double as amount_native,
      null::double as price_usd_at_event, 'unavailable' as valuation_basis, null::double as amount_usd_at_event
      from stg_onchain__events`);
    await db.exec(`create table mint_burn_events as ${model("mint_burn_events")}`);
    return await db.all<ClassifiedRow>(`with grouped as (
        select chain_id || '|' || tx_hash || '|' || stablecoin_id as group_key
        from mint_burn_events group by all
        having count(*) filter (where direction = 'mint') > 0 and count(*) filter (where direction = 'burn') > 0
      )
      select e.id, e.stablecoin_id, e.chain_id, e.tx_hash, e.ts::bigint as ts, e.flow_type, e.roundtrip_pair_id, g.group_key
      from mint_burn_events e
      join grouped g on g.group_key = e.chain_id || '|' || e.tx_hash || '|' || e.stablecoin_id
      order by g.group_key, e.id`);
  } finally {
    db.close();
  }
}

/**
 * `reclassify-atomic-roundtrips --ledger PATH [--captureDir D]`: the next RECLASSIFY_BATCH groups after
 * the stored cursor, classified by the build's rule, compared with the serving build's `flow_type`
 * (see ReclassifyResult). Stores the new cursor (deleted once done). Reads the ledger read-only.
 */
export async function runReclassifyAtomicRoundtrips(
  args: Record<string, string>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ReclassifyResult> {
  const config = loadBuildConfig(env);
  const sink = createSink(config);
  const ledgerPath = args.ledger ?? config.BALLAST_ONCHAIN_LEDGER ?? join(config.BALLAST_DATA_DIR, "onchain.duckdb");
  const byId = new Map<string, OnchainEventRow>();
  for (const r of recordedOnchainRows(args.captureDir ?? config.BALLAST_CAPTURE_DIR)) byId.set(r.id, r);
  if (existsSync(ledgerPath)) {
    const ledger = await LedgerStore.open(ledgerPath, { readOnly: true });
    try {
      for (const r of await ledger.events({ kinds: ["mint", "burn", "destroy"] })) byId.set(r.id, r);
    } finally {
      await ledger.close();
    }
  }
  const rows = [...byId.values()];
  const asOf = rows.reduce((m, r) => Math.max(m, r.ts), 0);
  const classified = rows.length ? await classifyGroups(rows, asOf) : [];
  const keys = [...new Set(classified.map((r) => r.group_key))];
  const stored = await sink.get(RECLASSIFY_CURSOR_KEY);
  const cursor = stored ? (JSON.parse(Buffer.from(stored).toString("utf8")) as { cursor: string | null }).cursor : null;
  const start = cursor === null ? 0 : keys.findIndex((k) => k > cursor);
  const batch = start < 0 ? [] : keys.slice(start, start + RECLASSIFY_BATCH);
  const done = start < 0 || start + RECLASSIFY_BATCH >= keys.length;
  const inBatch = new Set(batch);
  const mine = classified.filter((r) => inBatch.has(r.group_key));
  const serving = await servingBuild(sink);
  const before = new Map<string, string>();
  if (serving && mine.length) {
    const published =
      (await servedRows<{ id: string; flow_type: string }>(
        sink,
        serving.buildId,
        "select id, flow_type from served.mint_burn_events where list_contains(string_split($ids, ','), id) order by id",
        { ids: mine.map((r) => r.id).join(",") },
      )) ?? [];
    for (const p of published) before.set(p.id, p.flow_type);
  }
  const changes: RoundtripChange[] = [];
  for (const r of mine) {
    const was = before.get(r.id) ?? null;
    const atomic = r.flow_type === "atomic_roundtrip";
    if ((was === "atomic_roundtrip") === atomic) continue;
    changes.push({
      id: r.id,
      stablecoinId: r.stablecoin_id,
      hourTs: r.ts - (r.ts % 3600),
      before: was,
      after: atomic ? "atomic_roundtrip" : "not_atomic",
      pairId: atomic ? r.roundtrip_pair_id : null,
    });
  }
  const next = done ? null : (batch.at(-1) ?? null);
  if (next === null) await sink.delete(RECLASSIFY_CURSOR_KEY);
  else await sink.put(RECLASSIFY_CURSOR_KEY, JSON.stringify({ cursor: next }));
  return {
    done,
    updated: changes.length,
    hoursRecalculated: new Set(changes.map((c) => `${c.stablecoinId}|${c.hourTs}`)).size,
    batchSize: RECLASSIFY_BATCH,
    groups: batch.length,
    groupsTotal: keys.length,
    cursor: next,
    changes,
  };
}
