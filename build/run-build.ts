import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DATASET_RETENTION_DAYS, serialise } from "../datasets/contract.ts";
import { DATASETS } from "../datasets/datasets.ts";
import { loadRegistry } from "../pipelines/registry/registry.ts";
import type { Registry } from "../pipelines/registry/schema.ts";
import { type ListAsset, withUnreviewedCoins } from "../pipelines/registry/unreviewed.ts";
import { SITE_DATA_ARTIFACTS } from "../site-data/artifacts.ts";
import { type BuildManifest, type ManifestFile, MANIFEST_SCHEMA_VERSION } from "../site-data/manifest.ts";
import { collectCaptures, sha256 } from "./captures.ts";
import { REPO_ROOT } from "./config.ts";
import { Db } from "./duckdb.ts";
import { loadCaptures } from "./load.ts";
import { log } from "./log.ts";
import { discoverModels, runModels } from "./models.ts";
import { ANALYTICS } from "../pipelines/analytics/analytics.ts";
import type { Sink } from "./sinks/sink.ts";

/** Inputs of one build. `asOf` is Unix seconds; the build is a pure function of these. */
export interface BuildOptions {
  asOf: number;
  captureDir: string;
  sink: Sink;
  /** Persistent warehouse file holding history tables across builds; null for none. */
  warehousePath: string | null;
  registry?: Registry;
}

/** Thrown when an emitted payload or dataset row fails its schema; names the artifact. */
export class ArtifactError extends Error {
  constructor(message: string, readonly artifact: string) {
    super(message);
    this.name = "ArtifactError";
  }
}

/** Tables copied into the researchers' `ballast.duckdb`. */
const PUBLISHED_TABLES = [
  "registry_coins", "registry_chains", "stablecoins", "stablecoin_chain_supply", "chain_supply", "supply_history_daily",
  "total_supply_daily", "non_usd_share_daily", "fx_rates_daily", "price_history_daily", "chain_supply_samples",
  "depeg_events", "depeg_pending", "tape_events", "peg_scores", "price_consensus_slots", "price_observation_rejections",
  "supply_value_rejections", "listed_supply_daily", "source_quality_daily",
];

const HIST_COLUMNS = "stablecoin_id varchar, date date, native double, usd double, source varchar";

/** `2025-09-07T00:00:00Z` → `20250907T0000Z`. */
export function stampOf(asOf: number): string {
  return new Date(asOf * 1000).toISOString().replace(/[-:]/g, "").slice(0, 13) + "Z";
}

/** Stable JSON: object keys in insertion order (fixed by the contracts), newline-terminated. */
function toJson(payload: unknown): string {
  return `${JSON.stringify(payload)}\n`;
}

/**
 * Last day of a dead date's period (`2022-05` → 2022-05-31, `2022` → 2022-12-31): a death is
 * only known once its whole stated period has passed, so a build as of T never flags a coin dead
 * on a date it could not have known.
 */
export function deathKnownOn(deadFrom: string | null): string | null {
  if (!deadFrom) return null;
  const [y, m, d] = deadFrom.split("-").map(Number);
  if (d) return deadFrom;
  const end = m ? new Date(Date.UTC(y, m, 0)) : new Date(Date.UTC(y, 11, 31));
  return end.toISOString().slice(0, 10);
}

/**
 * Loads `registry_coins` and `registry_chains`. `is_dead` is judged at as-of: a coin is dead only
 * when its death is known on or before the as-of day (no look-ahead); `dead_from` is then null too.
 */
async function loadRegistryTables(db: Db, registry: Registry, asOfDay: string): Promise<void> {
  await db.loadRows("registry_coins", {
    id: "VARCHAR", llama_id: "VARCHAR", gecko_id: "VARCHAR", name: "VARCHAR", symbol: "VARCHAR", issuer: "VARCHAR", peg_type: "VARCHAR",
    peg_currency: "VARCHAR", peg_mechanism: "VARCHAR", nav_token: "BOOLEAN", floating_peg: "BOOLEAN", is_dead: "BOOLEAN",
    dead_from: "VARCHAR", cause_of_death: "VARCHAR", contracts_json: "VARCHAR", exchange_symbols_json: "VARCHAR", unreviewed: "BOOLEAN",
  }, registry.coins.map((c) => {
    const known = deathKnownOn(c.deadFrom);
    const dead = known !== null && known <= asOfDay;
    return {
      id: c.id, llama_id: c.llamaId, gecko_id: c.geckoId, name: c.name, symbol: c.symbol, issuer: c.issuer, peg_type: c.pegType,
      peg_currency: c.pegCurrency, peg_mechanism: c.pegMechanism, nav_token: c.navToken, floating_peg: c.floatingPeg, is_dead: dead,
      dead_from: dead ? c.deadFrom : null, cause_of_death: dead ? c.causeOfDeath : null, contracts_json: JSON.stringify(c.contracts),
      exchange_symbols_json: JSON.stringify(c.exchangeSymbols), unreviewed: c.provenance.includes("unreviewed"),
    };
  }));
  await db.loadRows("registry_chains", { id: "VARCHAR", name: "VARCHAR" }, registry.chains);
}

/**
 * Creates the build context and the (empty) history table. With `registry`, also loads the registry
 * tables as given (scripts and tests that load captures afterwards and need no unreviewed coins); a
 * build instead calls `loadBuildRegistry` once its captures are loaded.
 */
export async function prepareBuildDb(db: Db, asOf: number, registry?: Registry): Promise<void> {
  const asOfDay = new Date(asOf * 1000).toISOString().slice(0, 10);
  await db.exec("create table build_context as select $as_of::bigint as as_of, $as_of_day::date as as_of_day", { as_of: asOf, as_of_day: asOfDay });
  await db.exec(`create table hist_supply_snapshots (${HIST_COLUMNS})`);
  if (registry) await loadRegistryTables(db, registry, asOfDay);
}

/** Assets of the newest DefiLlama `/stablecoins` capture loaded into the raw table (none without one). */
export async function loadedListAssets(db: Db): Promise<ListAsset[]> {
  const rows = await db.all<{ llama_id: string; name: string; symbol: string; gecko_id: string | null; peg_type: string; peg_mechanism: string | null }>(
    `select llama_id, name, symbol, gecko_id, peg_type, peg_mechanism from raw_defillama__stablecoins
     qualify row_number() over (partition by llama_id order by _observed_at desc) = 1
     order by llama_id`);
  return rows.map((r) => ({ llamaId: r.llama_id, name: r.name, symbol: r.symbol, geckoId: r.gecko_id, pegType: r.peg_type, pegMechanism: r.peg_mechanism }));
}

/**
 * Loads the registry tables for a build whose captures are loaded: the curated registry plus a
 * provisional `unreviewed` record for every list asset it does not know (withUnreviewedCoins), so an
 * unknown upstream coin never blocks publication. Returns the manifest warnings (one per added coin).
 */
export async function loadBuildRegistry(db: Db, asOf: number, registry: Registry): Promise<string[]> {
  const asOfDay = new Date(asOf * 1000).toISOString().slice(0, 10);
  const { registry: full, warnings } = withUnreviewedCoins(registry, await loadedListAssets(db));
  await loadRegistryTables(db, full, asOfDay);
  return warnings;
}

/**
 * Runs one build: capture selection → load → models (+asserts) → emit (zod-checked) → publish.
 * `latest.json` is written last, only after every step passed; any error leaves the previous
 * build serving. Returns the manifest. Throws ModelError / ArtifactError / source errors.
 */
export async function runBuild(opts: BuildOptions): Promise<BuildManifest> {
  const t0 = Date.now();
  const registry = opts.registry ?? loadRegistry();
  const asOfDay = new Date(opts.asOf * 1000).toISOString().slice(0, 10);
  // One thread: floating-point sums are then computed in one order, so artifacts are byte-reproducible.
  const db = await Db.open(":memory:", { threads: "1" });
  const scratch = await mkdtemp(join(tmpdir(), "ballast-build-"));
  try {
    await prepareBuildDb(db, opts.asOf);
    if (opts.warehousePath && existsSync(opts.warehousePath)) {
      await db.exec(`attach '${opts.warehousePath.replace(/'/g, "''")}' as wh (read_only)`);
      await db.exec("insert into hist_supply_snapshots select * from wh.hist_supply_snapshots");
      await db.exec("detach wh");
    }

    const { captures, readerDropped, readerProblems } = await collectCaptures(opts.captureDir, opts.sink, opts.asOf);
    log("info", "load", "captures selected", { count: captures.length });
    const sources = await loadCaptures(db, captures, opts.asOf);
    const warnings = await loadBuildRegistry(db, opts.asOf, registry);
    const hasList = sources.some((s) => s.endpoint === "defillama.stablecoins" && s.rows > 0);
    if (!hasList) {
      // As-of fallback (int_coins_supply_current): current state from the supply history instead.
      warnings.push("source defillama.stablecoins: no capture observed at or before as-of; current supply from the latest supply-history point at most 3 days before as-of (supplySource defillama-history-gap-fill / coingecko-fallback)");
    }
    const modelRun = await runModels(db, discoverModels(join(REPO_ROOT, "pipelines/models"), ANALYTICS));
    log("info", "model", "models built", { count: modelRun.tables.length });
    const [{ n: currentCoins }] = await db.all<{ n: number }>("select count(*)::integer as n from stablecoins");
    if (currentCoins === 0) {
      throw new Error("source defillama.stablecoins: no capture observed at or before as-of and no supply history in the 3 days up to as-of; nothing to build");
    }
    const supplyRejections = Object.fromEntries((await db.all<{ reason: string; n: number }>(
      "select reason, count(*)::integer as n from supply_value_rejections group by reason order by reason")).map((r) => [r.reason, r.n]));
    const qualityRejections = { ...modelRun.rejected, ...(Object.keys(supplyRejections).length ? { supply_value_rejections: supplyRejections } : {}) };

    const sourceObservedAt = Object.fromEntries(sources.map((s) => [s.endpoint, s.newestObservedAt]));
    const files: { file: ManifestFile; body: string | Uint8Array }[] = [];
    const addFile = (path: string, body: string | Uint8Array, extra: Omit<ManifestFile, "path" | "sha256" | "bytes">) => {
      const bytes = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
      files.push({ file: { path, sha256: sha256(body), bytes, ...extra }, body });
    };

    for (const artifact of SITE_DATA_ARTIFACTS) {
      const rows: Record<string, Record<string, unknown>[]> = {};
      for (const [name, sql] of Object.entries(artifact.queries)) rows[name] = await db.all(sql);
      const { files: out, dataAsOf } = artifact.assemble(rows, { asOf: opts.asOf, sourceObservedAt });
      for (const f of out) {
        const res = artifact.schema.safeParse(f.payload);
        if (!res.success) {
          throw new ArtifactError(`artifact ${artifact.key} (${f.path}) failed its schema: ${res.error.issues.slice(0, 3).map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`, artifact.key);
        }
        addFile(f.path, toJson(f.payload), { artifact: artifact.key, rows: f.rows, dataAsOf, schemaVersion: artifact.schemaVersion, maxAgeSec: artifact.maxAgeSec });
      }
    }

    const datasetCopies: { key: string; body: string }[] = [];
    for (const ds of DATASETS) {
      const rows = await db.all(ds.sql);
      for (const [i, r] of rows.entries()) {
        const res = ds.row.safeParse(r);
        if (!res.success) throw new ArtifactError(`dataset ${ds.topic} row ${i} failed its schema: ${res.error.issues[0]?.path.join(".")}: ${res.error.issues[0]?.message}`, ds.topic);
      }
      for (const fmt of ds.formats) {
        const body = serialise(rows, ds.columns, fmt);
        const path = ds.dated ? `datasets/${ds.topic}/${asOfDay}.${fmt}` : `datasets/${ds.topic}.${fmt}`;
        addFile(path, body, { artifact: `dataset:${ds.topic}`, rows: rows.length, dataAsOf: sourceObservedAt["defillama.stablecoins"] ?? null, schemaVersion: "1.0.0" });
        if (ds.dated) datasetCopies.push({ key: path, body });
        if (ds.sheet && fmt === "csv") addFile(`sheets/${ds.topic}.csv`, body, { artifact: `sheet:${ds.topic}`, rows: rows.length, dataAsOf: sourceObservedAt["defillama.stablecoins"] ?? null, schemaVersion: "1.0.0" });
      }
    }

    // Researchers' database: the registry and every mart, read-only by convention.
    const dbPath = join(scratch, "ballast.duckdb");
    await db.exec(`attach '${dbPath}' as pub`);
    for (const t of PUBLISHED_TABLES) await db.exec(`create table pub.${t} as select * from ${t} order by all`);
    await db.exec("detach pub");
    addFile("ballast.duckdb", await readFile(dbPath), { artifact: "duckdb", rows: null, dataAsOf: sourceObservedAt["defillama.stablecoins"] ?? null, schemaVersion: "1.0.0" });

    files.sort((a, b) => a.file.path.localeCompare(b.file.path));
    const contentHash = sha256(files.filter((f) => f.file.path !== "ballast.duckdb").map((f) => `${f.file.path}:${f.file.sha256}`).join("\n"));
    const buildId = `${stampOf(opts.asOf)}-${contentHash.slice(0, 7)}`;
    const replay = captures.filter((c) => c.endpoint === "defillama.stablecoins").every((c) => c.origin === "recorded");
    const manifest: BuildManifest = {
      schemaVersion: MANIFEST_SCHEMA_VERSION,
      buildId,
      asOf: opts.asOf,
      generatedAt: opts.asOf,
      clock: replay ? "replay" : "wall",
      contentHash,
      files: files.map((f) => f.file),
      sources: sources.map((s) => ({
        endpoint: s.endpoint, status: s.status, rows: s.rows, dropped: s.dropped, newestObservedAt: s.newestObservedAt,
        captures: s.captures.map((c) => ({ path: c.path, origin: c.origin, observedAt: c.observedAt, sha256: c.sha256, rows: c.rows, ...(c.rejected ? { rejected: c.rejected } : {}) })),
      })),
      readerDropped,
      readerProblems,
      circuits: await readCircuits(opts.sink),
      models: modelRun.tables,
      qualityRejections,
      warnings,
    };

    // Publish: immutable build files, dated dataset copies, manifest, then the pointer last.
    for (const f of files) await opts.sink.put(`builds/${buildId}/${f.file.path}`, f.body);
    for (const c of datasetCopies) await opts.sink.put(c.key, c.body);
    await pruneDatedDatasets(opts.sink, opts.asOf);
    await opts.sink.put(`builds/${buildId}/manifest.json`, toJson(manifest));
    await opts.sink.put("latest.json", toJson({ buildId, asOf: opts.asOf, manifest: `builds/${buildId}/manifest.json` }));

    if (opts.warehousePath) await persistHistory(db, opts.warehousePath);
    log("info", "publish", "build published", { buildId, files: files.length, ms: Date.now() - t0 });
    return manifest;
  } finally {
    db.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Circuit states recorded by the last live capture (`raw/_circuits.json`), or {} when none ran. */
async function readCircuits(sink: Sink): Promise<BuildManifest["circuits"]> {
  const bytes = await sink.get("raw/_circuits.json");
  return bytes ? JSON.parse(Buffer.from(bytes).toString("utf8")) : {};
}

/** Deletes dated dataset files older than the retention window relative to asOf. */
async function pruneDatedDatasets(sink: Sink, asOf: number): Promise<void> {
  const cutoff = new Date((asOf - DATASET_RETENTION_DAYS * 86400) * 1000).toISOString().slice(0, 10);
  for (const key of await sink.list("datasets/")) {
    const m = /\/(\d{4}-\d{2}-\d{2})\.(csv|json|ndjson)$/.exec(key);
    if (m && m[1] < cutoff) await sink.delete(key);
  }
}

/**
 * Upserts this build's list-derived daily supply points (native units; `usd` provisional) into the
 * persistent warehouse. Only this build's own list points (priority 2), never the persisted copies it
 * read (priority 3), so a day is stored once.
 */
async function persistHistory(db: Db, warehousePath: string): Promise<void> {
  const own = "from int_supply_history_points where source = 'defillama-list' and priority = 2";
  await db.exec(`attach '${warehousePath.replace(/'/g, "''")}' as wh`);
  await db.exec(`create table if not exists wh.hist_supply_snapshots (${HIST_COLUMNS})`);
  await db.exec(`delete from wh.hist_supply_snapshots where (stablecoin_id, date) in (select stablecoin_id, date ${own})`);
  await db.exec(`insert into wh.hist_supply_snapshots select stablecoin_id, date, native, usd, source ${own} order by all`);
  await db.exec("detach wh");
}
