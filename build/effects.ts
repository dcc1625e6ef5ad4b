import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Capture, CaptureInfo } from "../pipelines/sources/types.ts";
import { assertCaptureDir, type CaptureHandler, type CaptureSet, collectCaptures, selectAtAsOf } from "./captures.ts";
import { type DepegVerdictSource, sinkVerdicts } from "./depeg-verdicts.ts";
import type { Db } from "./duckdb.ts";
import { log, type Logger } from "./log.ts";
import { OG_CACHE_FOLDER, OgImageCache } from "./og/cache.ts";
import { readOnchainLedger } from "./onchain-ledger.ts";
import type { PublishSink, Sink } from "./sinks/sink.ts";
import { STAGED_CACHE_FOLDER, StagedCache } from "./staged-cache.ts";
import { persistHistory, readHistory } from "./warehouse.ts";

/**
 * Everything a build touches outside its own in-memory DuckDB database. A build is a pure function of
 * (captures ≤ as-of, registry, warehouse history, as-of); these are the places those inputs come from
 * and the outputs go to. `runBuild(opts)` builds the real ones from its options (defaultBuildEffects);
 * `runBuild(params, effects)` takes them as given (build/memory-effects.ts for an in-memory build).
 */
export interface BuildEffects extends LoadEffects {
  /** Storage the build is published to (and whose `raw/_circuits.json` the manifest reports). */
  sink: PublishSink;
  /**
   * Folder the build may write scratch files under: each run makes its own `ballast-build-<pid>-*` folder
   * in it (DuckDB's spill files under `duckdb/`, emitter intermediates such as the researchers' DuckDB
   * file, large published bodies held under `spool/` until publish) and removes that folder when the
   * run ends, published or failed; the next run removes those of killed runs (build/scratch.ts). Nothing else is written to
   * the local disk except through `sink`, `warehouse`, `stagedCache` and `ogCache` (which the default effects
   * keep in the `ballast-staged-captures` and `ballast-og-images` folders here).
   */
  scratchDir: string;
  /** Rendered OG images kept across builds (build/og/cache.ts); absent or null: every image is rendered. */
  ogCache?: OgImageCache | null;
  /** Wall clock for the stamps that are about the run, not the data: run id, run record times, `ms`. */
  clock: Clock;
}

/** The effects the load stage uses (loadInputs / loadAndModel): inputs and logging, no outputs. */
export interface LoadEffects {
  captures: CaptureSource;
  /** History kept across builds; null for none (every build then starts from its captures alone). */
  warehouse: WarehouseStore | null;
  /** The on-chain ledger of the ingestion jobs; null for none. */
  ledger: LedgerSource | null;
  /** Receives every structured log line of the build (stage `load`, `model`, `emit`, `publish`). */
  logger: Logger;
  /** Parsed captures kept across builds (build/staged-cache.ts); absent or null: every capture is parsed. */
  stagedCache?: StagedCache | null;
  /**
   * Recorded depeg-history verdicts the build applies (build/depeg-verdicts.ts); absent or null: none
   * (dated snapshots, memory builds). defaultBuildEffects reads them from the sink.
   */
  verdicts?: DepegVerdictSource | null;
}

/** Where a build's captures come from. */
export interface CaptureSource {
  /**
   * Reads every available capture one at a time, handing each to `take` as it is read (awaited before
   * the next; the source keeps no payload), and returns the capture set a build as of `asOf` (Unix s)
   * reads: captures selected at as-of (selectAtAsOf: newest snapshot per params observed ≤ asOf,
   * every history capture) without payloads, plus reader drop counts and skipped empty recorded files.
   * Throws an Error naming the file when a capture cannot be read.
   */
  collect(asOf: number, take: CaptureHandler): Promise<CaptureSet>;
}

/** History tables persisted across builds (today `hist_supply_snapshots`, build/warehouse.ts). */
export interface WarehouseStore {
  /** Copies the persisted history into the build database's `hist_supply_snapshots` (nothing when none is stored yet). */
  read(db: Db): Promise<void>;
  /** Commits this build's own history rows; publish calls it just before the pointer moves. Throws to stop the publish. */
  commit(db: Db): Promise<void>;
}

/** The on-chain event ledger the ingestion jobs write, read as one live `onchain.events` capture. */
export interface LedgerSource {
  /**
   * Rows with block time ≤ `asOf` as a capture, and the per-config counts of unknown topics; null when
   * there is no ledger yet (readOnchainLedger). Throws naming the ledger when it stays locked.
   */
  read(db: Db, asOf: number): Promise<{ capture: Capture; unknownTopics: Record<string, number> } | null>;
}

/** A wall clock in milliseconds since the epoch. */
export interface Clock {
  now(): number;
}

/** The process wall clock (`Date.now()`). */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock stopped at `ms` (Unix milliseconds): with it even a build's run record is byte-reproducible. */
export function fixedClock(ms: number): Clock {
  return { now: () => ms };
}

/**
 * Recorded files of `captureDir` (pipelines/sources/recorded-captures.ts) plus the live `raw/`
 * captures of `sink` when given (collectCaptures). Throws as collectCaptures does; the directory's
 * existence is checked at each collect.
 */
export function recordedCaptures(captureDir: string, sink?: Sink, cache: StagedCache | null = null): CaptureSource {
  return { collect: (asOf, take) => collectCaptures(captureDir, sink, asOf, take, cache) };
}

/**
 * A fixed list of captures (e.g. made by a test), handed over in list order and selected at as-of like
 * recorded ones (selectAtAsOf); no reader drops, no skipped files. With `select: false` the list is
 * used as given, unselected.
 */
export function listCaptures(captures: readonly Capture[], opts: { select?: boolean } = {}): CaptureSource {
  return {
    collect: async (asOf, take) => {
      const infos: CaptureInfo[] = [];
      for (const { payload, ...info } of captures) {
        infos.push(info);
        await take(info, payload);
      }
      return {
        captures: opts.select === false ? infos : selectAtAsOf(infos, asOf),
        readerDropped: {},
        readerProblems: {},
        skippedCaptures: [],
      };
    },
  };
}

/** The persistent DuckDB warehouse file at `path` (build/warehouse.ts): read when it exists, created on the first commit. */
export function fileWarehouse(path: string): WarehouseStore {
  return {
    read: async (db) => {
      if (existsSync(path)) await readHistory(db, path);
    },
    commit: (db) => persistHistory(db, path),
  };
}

/** The on-chain ledger DuckDB file at `path` (build/onchain-ledger.ts); a missing file reads as none. */
export function fileLedger(path: string): LedgerSource {
  return { read: (db, asOf) => readOnchainLedger(db, path, asOf) };
}

/** Where a real build reads and writes: the paths of BuildOptions. */
export interface BuildPaths {
  captureDir: string;
  sink: PublishSink;
  /** Persistent warehouse file; null for none. */
  warehousePath: string | null;
  /** On-chain ledger file; null/absent for none. */
  onchainLedgerPath?: string | null;
  /** Parent of the per-run scratch folder (default: the OS temp dir; `BALLAST_SCRATCH_DIR`, default `<BALLAST_DATA_DIR>/scratch`, in the CLI). */
  scratchDir?: string;
}

/**
 * The real effects of a build: recorded captures of `captureDir` + live captures in `sink` (and the
 * depeg-history verdicts recorded there), the
 * warehouse and ledger files (when set), scratch under `scratchDir` (default the OS temp dir), the
 * parsed-capture cache in its `ballast-staged-captures` folder (STAGED_CACHE_FOLDER) and the rendered
 * OG image cache in its `ballast-og-images` folder (OG_CACHE_FOLDER) there, the system clock
 * and the stderr JSON-line logger. Throws the one-line BALLAST_CAPTURE_DIR error when the
 * capture directory is missing (assertCaptureDir), before anything touches the sink.
 */
export function defaultBuildEffects(paths: BuildPaths): BuildEffects {
  assertCaptureDir(paths.captureDir);
  const scratchDir = paths.scratchDir ?? tmpdir();
  const stagedCache = new StagedCache(join(scratchDir, STAGED_CACHE_FOLDER));
  return {
    captures: recordedCaptures(paths.captureDir, paths.sink, stagedCache),
    warehouse: paths.warehousePath ? fileWarehouse(paths.warehousePath) : null,
    ledger: paths.onchainLedgerPath ? fileLedger(paths.onchainLedgerPath) : null,
    sink: paths.sink,
    scratchDir,
    stagedCache,
    ogCache: new OgImageCache(join(scratchDir, OG_CACHE_FOLDER)),
    verdicts: sinkVerdicts(paths.sink),
    clock: systemClock,
    logger: log,
  };
}
