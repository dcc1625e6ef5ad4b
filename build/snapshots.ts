import { tmpdir } from "node:os";
import { sweepAbandoned, sweepScratch } from "./scratch.ts";
import { METHODOLOGY_CHANGELOGS } from "../pipelines/analytics/changelogs.ts";
import type { Registry } from "../pipelines/registry/schema.ts";
import {
  dailyDigestArtifact,
  DailyDigestSchema,
  DIGEST_INDEX_KEY,
  DigestIndexSchema,
  digestIndexEntry,
  digestKey,
} from "../site-data/daily-digest.ts";
import { depegLedgerArtifact, DepegLedgerSchema } from "../site-data/depeg-events.ts";
import { dexLiquidityArtifact, DexLiquiditySchema } from "../site-data/dex-liquidity.ts";
import { reportCardsArtifact, ReportCardsPayloadSchema } from "../site-data/report-cards.ts";
import {
  CHAIN_GENESIS,
  chainHashOf,
  SNAPSHOT_INDEX_KEY,
  SNAPSHOT_VERSION,
  type Snapshot,
  snapshotDatabaseKey,
  type SnapshotIndexEntry,
  SnapshotIndexSchema,
  SnapshotSchema,
  snapshotKey,
  type SnapshotStablecoin,
  sectionCoverage,
  storedJson,
  thinSections,
} from "../site-data/snapshot.ts";
import { StabilityIndexFileSchema, stabilityIndexArtifact } from "../site-data/stability-index.ts";
import { stablecoinsArtifact, StablecoinsPayloadSchema } from "../site-data/stablecoins.ts";
import { stressSignalsArtifact, StressSignalsFileSchema } from "../site-data/stress-signals.ts";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { DATASET_RETENTION_DAYS } from "../datasets/contract.ts";
import { sha256 } from "./captures.ts";
import type { CaptureSource } from "./effects.ts";
import type { StagedCache } from "./staged-cache.ts";
import { log, type Logger } from "./log.ts";
import type { Sink } from "./sinks/sink.ts";
import { emitBuild, emittedPayload, inputsDigest, toJson } from "./stages/emit.ts";
import { duckdbEmitter, siteDataEmitterOf } from "./stages/emitters.ts";
import { loadAndModel } from "./stages/model.ts";
import { utcDay } from "./time.ts";

/** The site-data artifacts a snapshot carries (emitted alone: a snapshot day does not publish a whole build). */
const SNAPSHOT_ARTIFACTS = [
  stablecoinsArtifact,
  reportCardsArtifact,
  stabilityIndexArtifact,
  stressSignalsArtifact,
  dexLiquidityArtifact,
  depegLedgerArtifact,
  dailyDigestArtifact,
];

/**
 * As-of (Unix s) of the snapshot of UTC day `day` (`YYYY-MM-DD`): the day's close, the next day's
 * 00:00:00Z. Daily points stamped at that midnight close the day (a CoinGecko daily price, a
 * DefiLlama New York day), so the snapshot and the digest of D see them; nothing later.
 */
export function snapshotAsOf(day: string): number {
  return Date.parse(`${day}T00:00:00Z`) / 1000 + 86400;
}

/** Every UTC day from `from` to `to` inclusive (`YYYY-MM-DD`); throws when `to` is before `from` or either is not a date. */
export function daysBetween(from: string, to: string): string[] {
  const start = Date.parse(`${from}T00:00:00Z`),
    end = Date.parse(`${to}T00:00:00Z`);
  if (!Number.isFinite(start) || !Number.isFinite(end))
    throw new Error(`not a YYYY-MM-DD date: ${Number.isFinite(start) ? to : from}`);
  if (end < start) throw new Error(`--to ${to} is before --from ${from}`);
  const out: string[] = [];
  for (let t = start; t <= end; t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/**
 * Inputs of one snapshot build: the recorded captures of `captureDir` (and live ones in the sink's `raw/`),
 * or `captures` (a build's own capture source: the day-closing snapshot of runBuild), an optional registry.
 */
export type SnapshotOptions = {
  sink: Sink;
  registry?: Registry;
  /** Folder DuckDB spills to (default DuckDB's `.tmp` in the cwd). */
  spillDir?: string;
} & (
  | { captureDir: string; captures?: never }
  | {
      captures: CaptureSource;
      captureDir?: never;
      /** Receives the load/model log lines (default: stderr). */
      logger?: Logger;
      /** The staged cache `captures` was made with (a build's effects), so its cached parses are found. */
      stagedCache?: StagedCache | null;
    }
);

/** What one snapshot day publishes: the envelope and its bytes, the day's digest bytes, and its `ballast.duckdb` (bytes not reproducible). */
export interface ComposedSnapshot {
  snapshot: Snapshot;
  bytes: string;
  digest: string;
  duckdb: Uint8Array;
}

/**
 * Builds the snapshot of UTC day `day` in memory: load → model as of the day's close (no warehouse
 * history: a snapshot depends only on the recorded inputs, so CI can rebuild it), emits the snapshot's
 * artifacts, the day's digest and the researchers' DuckDB file, and composes the envelope
 * (SnapshotSchema). Throws what the build throws (a missing capture directory, a failed assert).
 */
export async function composeSnapshot(day: string, opts: SnapshotOptions): Promise<ComposedSnapshot> {
  const asOf = snapshotAsOf(day);
  // No warehouse and no ledger either way: a snapshot depends only on the captures, so verify-snapshot rebuilds it.
  const modelled = await loadAndModel(
    opts.captures
      ? {
          asOf,
          registry: opts.registry,
          spillDir: opts.spillDir,
          effects: {
            captures: opts.captures,
            warehouse: null,
            ledger: null,
            logger: opts.logger ?? log,
            stagedCache: opts.stagedCache,
          },
        }
      : {
          asOf,
          captureDir: opts.captureDir,
          sink: opts.sink,
          registry: opts.registry,
          warehousePath: null,
          spillDir: opts.spillDir,
        },
  );
  try {
    const emitted = await emitBuild(
      {
        db: modelled.db,
        asOf,
        asOfDay: modelled.asOfDay,
        sourceObservedAt: modelled.sourceObservedAt,
        inputsSha256: inputsDigest(modelled.captures),
      },
      [siteDataEmitterOf(SNAPSHOT_ARTIFACTS), duckdbEmitter],
      { logger: (opts.captures && opts.logger) || log },
    );
    const files = new Map(emitted.files.map((f) => [f.file.path, f.body]));
    const list = emittedPayload(files, stablecoinsArtifact, StablecoinsPayloadSchema);
    if (!list) throw new Error(`snapshot ${day}: the stablecoin list was not emitted or failed its schema`);
    const cards = emittedPayload(files, reportCardsArtifact, ReportCardsPayloadSchema);
    const psi = emittedPayload(files, stabilityIndexArtifact, StabilityIndexFileSchema);
    const dews = emittedPayload(files, stressSignalsArtifact, StressSignalsFileSchema);
    const liquidity = emittedPayload(files, dexLiquidityArtifact, DexLiquiditySchema);
    const depeg = emittedPayload(files, depegLedgerArtifact, DepegLedgerSchema);
    if (!depeg) throw new Error(`snapshot ${day}: the depeg ledger was not emitted or failed its schema`);
    const digest = emittedPayload(files, dailyDigestArtifact, DailyDigestSchema);
    if (digest?.date !== day) throw new Error(`snapshot ${day}: the daily digest was not emitted for this day`);
    const unavailable: Record<string, string> = {};
    if (!cards) unavailable.reportCards = "no report cards published as of this day";
    if (!psi?.current) unavailable.psi = "no stability index reading as of this day";
    if (!dews) unavailable.dews = "no stress signals published as of this day";
    if (!liquidity) unavailable.liquidity = "no DEX pool capture observed by this day";
    // Thin inputs: a per-coin section covering under SECTION_COVERAGE_FLOOR of the listed coins names its coverage.
    const coverage = sectionCoverage(list.peggedAssets);
    Object.assign(unavailable, thinSections(coverage));
    const dayStart = asOf - 86400;
    // The captures that contributed rows (a history file recorded after the day contributes none).
    const used = modelled.sources.flatMap((s) =>
      s.captures
        .filter((c) => c.rows > 0)
        .map((c) => ({ endpoint: s.endpoint, path: c.path, sha256: c.sha256, observedAt: c.observedAt })),
    );
    const inputs = [...new Map(used.map((c) => [c.path, c])).values()].sort((a, b) => a.path.localeCompare(b.path));
    const snapshot = SnapshotSchema.parse({
      version: SNAPSHOT_VERSION,
      snapshotDate: day,
      asOf,
      generatedAt: asOf,
      buildId: emitted.buildId,
      methodologyVersions: Object.fromEntries(
        METHODOLOGY_CHANGELOGS.map((c) => [c.versionId.replace(/-v\d+$/, "").replace(/^ballast-/, ""), c.versionId]),
      ),
      inputs,
      stablecoins: list.peggedAssets.map(
        (a): SnapshotStablecoin => ({
          id: a.id,
          name: a.name,
          symbol: a.symbol,
          pegType: a.pegType,
          pegMechanism: a.pegMechanism,
          price: a.price,
          priceConfidence: a.priceConfidence,
          priceSource: a.priceSource,
          priceUnavailableReason: a.priceUnavailableReason ?? null,
          circulatingUsd: a.circulating[a.pegType] ?? null,
          circulating: a.circulating,
          chains: a.chains,
          supplySource: a.supplySource ?? null,
        }),
      ),
      fxFallbackRates: list.fxFallbackRates ?? {},
      reportCards: cards?.cards ?? [],
      psi: psi?.current ?? null,
      dews: dews?.coins ?? [],
      liquidity: liquidity?.coins ?? [],
      depegIncidents: depeg.events.filter((e) => e.endedAt === null || e.endedAt >= dayStart),
      unavailable,
      coverage, // the schema keeps counts and ids (the symbols only word `unavailable`)
    });
    const duckdb = files.get("ballast.duckdb");
    if (!(duckdb instanceof Uint8Array)) throw new Error(`snapshot ${day}: ballast.duckdb was not emitted`);
    return { snapshot, bytes: toJson(snapshot), digest: toJson(digest), duckdb };
  } finally {
    modelled.db.close();
  }
}

/**
 * Stores what a snapshot day publishes unless a snapshot exists for the day (snapshots, digests and
 * their DuckDB files are dated objects, written once: never rewritten): `snapshots/<day>/ballast.duckdb`
 * and `digests/<day>.json` first (each only where none is stored), `snapshots/<day>.json` last (the day
 * counts as published once it exists), then adds the day's row to `snapshots/index.json` (with the
 * sha256 of the day's dated objects and its chain link) and `digests/index.json`. Returns whether it was written.
 */
export async function publishSnapshot(
  sink: Sink,
  day: string,
  composed: Pick<ComposedSnapshot, "bytes" | "digest" | "duckdb">,
): Promise<boolean> {
  if (await sink.get(snapshotKey(day))) return false;
  if (!(await sink.get(snapshotDatabaseKey(day)))) await sink.put(snapshotDatabaseKey(day), composed.duckdb);
  if (!(await sink.get(digestKey(day)))) await sink.put(digestKey(day), composed.digest);
  await sink.put(snapshotKey(day), composed.bytes);
  await addIndexRows(sink, day);
  return true;
}

/** Dataset day files `datasets/<topic>/<YYYY-MM-DD>.<fmt>` (no `.br`/`.gz` sibling); group 1 is the day. */
const DATED_DATASET_FILE = /^datasets\/[^/]+\/(\d{4}-\d{2}-\d{2})\.(?:csv|json|ndjson|parquet)$/;

/** sha256 of the object at `key`, null when none is stored. */
const storedSha256 = async (sink: Sink, key: string) => {
  const bytes = await sink.get(key);
  return bytes ? sha256(bytes) : null;
};

/**
 * The index row of a stored snapshot without its chain link: the snapshot's fields and content hash,
 * and the sha256 of the day's digest, DuckDB file and dataset day files (`datasetKeys`: every stored
 * key under `datasets/`). Null when the snapshot is missing or fails its schema, with a warning.
 */
async function snapshotRecord(
  sink: Sink,
  day: string,
  datasetKeys: readonly string[],
): Promise<Omit<SnapshotIndexEntry, "chainIndex" | "previousChainHash" | "chainHash"> | null> {
  const key = snapshotKey(day);
  const bytes = await sink.get(key);
  const s = bytes && storedJson(bytes, SnapshotSchema);
  if (!bytes || !s) {
    log("warn", "snapshots", "stored snapshot failed its schema; left out of the index", { key });
    return null;
  }
  const datedFiles = [];
  for (const path of datasetKeys.filter((k) => DATED_DATASET_FILE.exec(k)?.[1] === day).sort()) {
    const hash = await storedSha256(sink, path);
    if (hash) datedFiles.push({ path, sha256: hash });
  }
  return {
    snapshotDate: s.snapshotDate,
    buildId: s.buildId,
    methodologyVersions: s.methodologyVersions,
    contentHash: sha256(bytes),
    byteSize: bytes.byteLength,
    createdAt: s.generatedAt,
    digestSha256: await storedSha256(sink, digestKey(day)),
    databaseSha256: await storedSha256(sink, snapshotDatabaseKey(day)),
    datedFiles,
  };
}

/** `record` linked after `head` (the row with the highest chainIndex; null for the first row). */
function linked(
  record: Omit<SnapshotIndexEntry, "chainIndex" | "previousChainHash" | "chainHash">,
  head: SnapshotIndexEntry | null,
): SnapshotIndexEntry {
  const row = {
    ...record,
    chainIndex: head ? head.chainIndex + 1 : 0,
    previousChainHash: head ? head.chainHash : CHAIN_GENESIS,
  };
  return { ...row, chainHash: chainHashOf(row) };
}

/** The chain head: the row with the highest chainIndex, null for an empty index. */
const chainHead = (rows: readonly SnapshotIndexEntry[]) =>
  rows.reduce<SnapshotIndexEntry | null>((h, r) => (h && h.chainIndex > r.chainIndex ? h : r), null);

/**
 * Adds the rows of `day` to the snapshot and digest indexes (newest first): reads each index once and
 * rewrites it with the day's row merged, so a backfill of N days costs N index writes, not N² reads.
 * A snapshot row is written once: a day already indexed keeps its row. A new row is appended to the
 * chain in publication order (linked to the current head), so filling an older gap later never changes
 * a published row. An unreadable or missing index is rebuilt from the stored files (writeSnapshotIndex).
 */
async function addIndexRows(sink: Sink, day: string): Promise<void> {
  const rawIndex = await sink.get(SNAPSHOT_INDEX_KEY),
    rawDigests = await sink.get(DIGEST_INDEX_KEY);
  const index = rawIndex && storedJson(rawIndex, SnapshotIndexSchema);
  if (!index) {
    if (rawIndex)
      log(
        "warn",
        "snapshots",
        "snapshot index unreadable (or written before the chain): rebuilt from the stored files",
      );
    return writeSnapshotIndex(sink);
  }
  const digests = (rawDigests && storedJson(rawDigests, DigestIndexSchema)) || { digests: await digestRows(sink) };
  const digestBytes = await sink.get(digestKey(day));
  const digestRow = digestBytes ? digestIndexEntry(digestBytes) : null;
  const merge = <T extends Record<K, string>, K extends string>(rows: T[], add: T | null, k: K) =>
    (add ? [...rows.filter((r) => r[k] !== add[k]), add] : rows).sort((a, b) => b[k].localeCompare(a[k]));
  await sink.put(
    DIGEST_INDEX_KEY,
    toJson(DigestIndexSchema.parse({ digests: merge(digests.digests, digestRow, "date") })),
  );
  if (index.snapshots.some((r) => r.snapshotDate === day)) return;
  const record = await snapshotRecord(sink, day, await sink.list("datasets/"));
  const row = record ? linked(record, chainHead(index.snapshots)) : null;
  await sink.put(
    SNAPSHOT_INDEX_KEY,
    toJson(SnapshotIndexSchema.parse({ snapshots: merge(index.snapshots, row, "snapshotDate") })),
  );
}

/**
 * Rewrites `snapshots/index.json` and `digests/index.json` (newest first) from every stored
 * `snapshots/<day>.json` and `digests/<day>.json`: the first index, or the recovery of a lost or
 * unreadable one (and the migration of one written before the chain). The chain is then established in
 * date order from the files as stored now: a holder of an earlier chain hash sees it change.
 */
export async function writeSnapshotIndex(sink: Sink): Promise<void> {
  const datasetKeys = await sink.list("datasets/");
  const rows: SnapshotIndexEntry[] = [];
  const days = (await sink.list("snapshots/"))
    .map((key) => /^snapshots\/(\d{4}-\d{2}-\d{2})\.json$/.exec(key)?.[1])
    .filter((d): d is string => d !== undefined)
    .sort();
  for (const day of days) {
    const record = await snapshotRecord(sink, day, datasetKeys);
    if (record) rows.push(linked(record, rows.at(-1) ?? null));
  }
  rows.sort((a, b) => b.snapshotDate.localeCompare(a.snapshotDate));
  await sink.put(DIGEST_INDEX_KEY, toJson(DigestIndexSchema.parse({ digests: await digestRows(sink) })));
  await sink.put(SNAPSHOT_INDEX_KEY, toJson(SnapshotIndexSchema.parse({ snapshots: rows })));
}

/** `digests/index.json` rows (newest first) of every stored `digests/<day>.json` that passes its schema. */
async function digestRows(sink: Sink) {
  const digests = [];
  for (const key of await sink.list("digests/")) {
    if (!/^digests\/\d{4}-\d{2}-\d{2}\.json$/.test(key)) continue;
    const bytes = await sink.get(key);
    const row = bytes && digestIndexEntry(bytes);
    if (row) digests.push(row);
    else log("warn", "snapshots", "stored digest failed its schema; left out of the archive", { key });
  }
  return digests.sort((a, b) => b.date.localeCompare(a.date));
}

/** One day of a backfill: `built` (with its build seconds) or `skipped` (already published). */
export interface BackfillStep {
  day: string;
  index: number;
  total: number;
  outcome: "built" | "skipped";
  seconds: number;
}

/**
 * Backfills one immutable snapshot per UTC day from `from` to `to` (inclusive), in order, incrementally:
 * a day already stored is skipped (and indexed when a stopped run left it without its row; an index
 * that fails its schema is rebuilt first), so a rerun of a stopped or killed backfill resumes after its
 * last published day; it first removes what a killed run left (sweepScratch of the OS temp dir, the
 * sink's abandoned temporary files). `onStep` reports each day (the CLI draws a progress bar from it).
 * Returns the steps. Throws on the first day whose build fails (the days before it stay published).
 */
export async function backfillSnapshots(
  from: string,
  to: string,
  opts: SnapshotOptions & { onStep?: (s: BackfillStep) => void },
): Promise<BackfillStep[]> {
  const days = daysBetween(from, to);
  const steps: BackfillStep[] = [];
  // What a killed backfill left: its scratch folders (OS temp dir) and the sink's unfinished writes.
  await sweepScratch(tmpdir());
  const abandoned = await sweepAbandoned(opts.sink);
  if (abandoned.length) log("info", "snapshots", "removed temporary files of a killed run", { keys: abandoned });
  const raw = await opts.sink.get(SNAPSHOT_INDEX_KEY);
  const index = raw && storedJson(raw, SnapshotIndexSchema);
  if (raw && !index) {
    log("warn", "snapshots", "snapshot index unreadable (or written before the chain): rebuilt from the stored files");
    await writeSnapshotIndex(opts.sink);
  }
  const indexed = new Set(index ? index.snapshots.map((r) => r.snapshotDate) : []);
  for (const [i, day] of days.entries()) {
    const t0 = Date.now();
    let outcome: BackfillStep["outcome"] = "skipped";
    if (!(await opts.sink.get(snapshotKey(day)))) {
      await publishSnapshot(opts.sink, day, await composeSnapshot(day, opts));
      outcome = "built";
    } else if (index && !indexed.has(day)) await addIndexRows(opts.sink, day); // stored, but a run stopped before its row
    const step = { day, index: i + 1, total: days.length, outcome, seconds: (Date.now() - t0) / 1000 };
    steps.push(step);
    opts.onStep?.(step);
  }
  return steps;
}

/**
 * What verifySnapshot found: the stored and rebuilt sha256 of the snapshot and of the day's digest and,
 * when they differ, the first differing JSON paths (digest paths prefixed `digest:`). `identical` holds
 * when both match (the DuckDB file is not compared: its bytes are not reproducible).
 */
export interface SnapshotVerification {
  day: string;
  storedSha256: string | null;
  rebuiltSha256: string;
  identical: boolean;
  differences: string[];
  digest: { storedSha256: string | null; rebuiltSha256: string; identical: boolean };
  /** The whole record: the index's hash chain and the stored files of every indexed day (verifyChain). */
  chain: ChainVerification;
}

/** JSON paths (`a.b[3].c`) where two values differ, at most `limit`. */
export function jsonDifferences(a: unknown, b: unknown, path = "", limit = 20, out: string[] = []): string[] {
  if (out.length >= limit) return out;
  if (
    typeof a !== typeof b ||
    Array.isArray(a) !== Array.isArray(b) ||
    a === null ||
    b === null ||
    typeof a !== "object"
  ) {
    if (JSON.stringify(a) !== JSON.stringify(b))
      out.push(`${path || "(root)"}: ${JSON.stringify(a)?.slice(0, 80)} → ${JSON.stringify(b)?.slice(0, 80)}`);
    return out;
  }
  const keys = Array.isArray(a)
    ? [...Array(Math.max(a.length, (b as unknown[]).length)).keys()]
    : [...new Set([...Object.keys(a), ...Object.keys(b as object)])];
  for (const k of keys) {
    const sub = Array.isArray(a) ? `${path}[${k}]` : path ? `${path}.${k}` : String(k);
    jsonDifferences(
      (a as Record<string, unknown>)[k as never],
      (b as Record<string, unknown>)[k as never],
      sub,
      limit,
      out,
    );
  }
  return out;
}

/**
 * Rebuilds the snapshot of `day` and its digest and compares them byte for byte with the stored ones
 * (null sha256 when none is stored), then verifies the chain of the whole record (verifyChain, with
 * `opts.expectChainHash` when the caller holds one).
 */
export async function verifySnapshot(
  day: string,
  opts: SnapshotOptions & { expectChainHash?: string },
): Promise<SnapshotVerification> {
  const stored = await opts.sink.get(snapshotKey(day));
  const storedDigest = await opts.sink.get(digestKey(day));
  const { bytes, digest } = await composeSnapshot(day, opts);
  const rebuiltSha256 = sha256(bytes),
    digestSha256 = sha256(digest);
  const storedSha256 = stored ? sha256(stored) : null,
    storedDigestSha256 = storedDigest ? sha256(storedDigest) : null;
  const differences =
    stored && storedSha256 !== rebuiltSha256
      ? jsonDifferences(JSON.parse(Buffer.from(stored).toString("utf8")), JSON.parse(bytes))
      : [];
  if (storedDigest && storedDigestSha256 !== digestSha256) {
    differences.push(
      ...jsonDifferences(JSON.parse(Buffer.from(storedDigest).toString("utf8")), JSON.parse(digest)).map(
        (d) => `digest:${d}`,
      ),
    );
  }
  const digestIdentical = storedDigestSha256 === digestSha256;
  return {
    day,
    storedSha256,
    rebuiltSha256,
    identical: storedSha256 === rebuiltSha256 && digestIdentical,
    differences,
    digest: { storedSha256: storedDigestSha256, rebuiltSha256: digestSha256, identical: digestIdentical },
    chain: await verifyChain(opts.sink, { expectChainHash: opts.expectChainHash }),
  };
}

/** One thing verifyChain found wrong: the day (`-` for the index as a whole), the stored key and why. */
export interface ChainProblem {
  date: string;
  file: string;
  reason: string;
}

/** What verifyChain found over every row of `snapshots/index.json`. */
export interface ChainVerification {
  /** Rows in the index. */
  rows: number;
  /** The row with the highest chainIndex (the newest published), null for an empty index. */
  head: { snapshotDate: string; chainIndex: number; chainHash: string } | null;
  /** Stored files re-hashed (snapshots, digests, DuckDB files, dataset day files and their siblings). */
  filesChecked: number;
  /** Dataset day files a row lists that retention has since deleted (dated before its window): not a break. */
  pruned: string[];
  /** Broken links and altered or missing files, by date then file; the first is the first broken link by date. */
  problems: ChainProblem[];
  ok: boolean;
}

/**
 * Verifies the snapshot record without rebuilding anything: recomputes the hash chain of
 * `snapshots/index.json` (rows in chainIndex order; each row's chainHashOf and its link to the previous
 * row) and re-hashes every stored file each row names — the snapshot (sha256 and size), digest, DuckDB
 * file and dataset day files, whose `.br`/`.gz` siblings must decompress to the recorded bytes. A dataset
 * day file dated before the retention window (DATASET_RETENTION_DAYS before the newer of the serving
 * build's and the head row's as-of) may be gone: listed in `pruned`. A stored snapshot without a row is
 * a problem too. With `expectChainHash` (a chainHash the caller holds, e.g. the newest row it saw),
 * some row must carry it: a rewritten past day cannot keep it.
 */
export async function verifyChain(sink: Sink, opts: { expectChainHash?: string } = {}): Promise<ChainVerification> {
  const problems: ChainProblem[] = [];
  const pruned: string[] = [];
  let filesChecked = 0;
  const raw = await sink.get(SNAPSHOT_INDEX_KEY);
  const index = raw && storedJson(raw, SnapshotIndexSchema);
  const stored = (await sink.list("snapshots/"))
    .map((k) => /^snapshots\/(\d{4}-\d{2}-\d{2})\.json$/.exec(k)?.[1])
    .filter((d): d is string => d !== undefined);
  if (raw && !index) problems.push({ date: "-", file: SNAPSHOT_INDEX_KEY, reason: "fails its schema" });
  const rows = [...(index ? index.snapshots : [])].sort((a, b) => a.chainIndex - b.chainIndex);
  const head = rows.at(-1) ?? null;
  const pointer = await sink.get("latest.json");
  const servingAsOf = pointer
    ? ((JSON.parse(Buffer.from(pointer).toString("utf8")) as { asOf?: number }).asOf ?? 0)
    : 0;
  const cutoff = utcDay(Math.max(servingAsOf, head?.createdAt ?? 0) - DATASET_RETENTION_DAYS * 86400);
  const check = async (date: string, file: string, expected: string | null, size?: number) => {
    const bytes = await sink.get(file);
    if (expected === null) return bytes;
    filesChecked++;
    if (!bytes) problems.push({ date, file, reason: "missing" });
    else if (sha256(bytes) !== expected)
      problems.push({ date, file, reason: `sha256 ${sha256(bytes)} where the index records ${expected}` });
    else if (size !== undefined && bytes.byteLength !== size)
      problems.push({ date, file, reason: `${bytes.byteLength} bytes where the index records ${size}` });
    return bytes;
  };
  for (const [i, row] of rows.entries()) {
    const date = row.snapshotDate;
    const previous = i === 0 ? CHAIN_GENESIS : rows[i - 1].chainHash;
    if (row.chainIndex !== i)
      problems.push({ date, file: SNAPSHOT_INDEX_KEY, reason: `chainIndex ${row.chainIndex} where ${i} follows` });
    if (row.previousChainHash !== previous)
      problems.push({
        date,
        file: SNAPSHOT_INDEX_KEY,
        reason: `previousChainHash is not the chainHash of the row before it (${i === 0 ? "genesis" : rows[i - 1].snapshotDate})`,
      });
    if (chainHashOf(row) !== row.chainHash)
      problems.push({
        date,
        file: SNAPSHOT_INDEX_KEY,
        reason: "the row's fields do not hash to its chainHash (row edited)",
      });
    await check(date, snapshotKey(date), row.contentHash, row.byteSize);
    await check(date, digestKey(date), row.digestSha256);
    await check(date, snapshotDatabaseKey(date), row.databaseSha256);
    for (const f of row.datedFiles) {
      if (!(await sink.get(f.path)) && date < cutoff) {
        pruned.push(f.path);
        continue;
      }
      await check(date, f.path, f.sha256);
      for (const [suffix, decode] of [
        [".br", brotliDecompressSync],
        [".gz", gunzipSync],
      ] as const) {
        const sibling = await sink.get(`${f.path}${suffix}`);
        if (!sibling) continue;
        filesChecked++;
        let same = false;
        try {
          same = sha256(decode(sibling)) === f.sha256;
        } catch {
          same = false;
        }
        if (!same)
          problems.push({
            date,
            file: `${f.path}${suffix}`,
            reason: `does not decompress to the bytes the index records for ${f.path}`,
          });
      }
    }
  }
  const indexed = new Set(rows.map((r) => r.snapshotDate));
  for (const day of stored)
    if (index && !indexed.has(day))
      problems.push({ date: day, file: snapshotKey(day), reason: "stored but not in the index" });
  if (opts.expectChainHash && !rows.some((r) => r.chainHash === opts.expectChainHash))
    problems.push({
      date: "-",
      file: SNAPSHOT_INDEX_KEY,
      reason: `no row carries the chain hash ${opts.expectChainHash} (the record was rewritten since it was read)`,
    });
  problems.sort((a, b) => a.date.localeCompare(b.date) || a.file.localeCompare(b.file));
  return {
    rows: rows.length,
    head: head ? { snapshotDate: head.snapshotDate, chainIndex: head.chainIndex, chainHash: head.chainHash } : null,
    filesChecked,
    pruned,
    problems,
    ok: problems.length === 0,
  };
}
