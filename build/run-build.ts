import { scratchPrefix, sweepScratch } from "./scratch.ts";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Registry } from "../pipelines/registry/schema.ts";
import { type BuildManifest, BuildManifestSchema, type RunRecord, RunRecordSchema } from "../site-data/manifest.ts";
import { sha256 } from "./captures.ts";
import { type BuildEffects, type Clock, defaultBuildEffects } from "./effects.ts";
import type { PublishSink, Sink } from "./sinks/sink.ts";
import { assembleManifest, emitBuild, inputsDigest, readCircuits, toJson } from "./stages/emit.ts";
import { EMITTERS } from "./stages/emitters.ts";
import { loadAndModel } from "./stages/model.ts";
import { composeSnapshot, publishSnapshot } from "./snapshots.ts";
import { snapshotKey } from "../site-data/snapshot.ts";
import { utcDay } from "./time.ts";
import {
  applyRetention,
  publishBuild,
  type RetentionReport,
  sweepLeftovers,
  type SweepReport,
} from "./stages/publish.ts";

/** What a build computes: as-of (Unix s), registry and retention; where it reads and writes is its BuildEffects. */
export interface BuildParams {
  asOf: number;
  registry?: Registry;
  /** Newest complete builds retention keeps (BALLAST_KEEP_BUILDS; default 5). */
  keepBuilds?: number;
}

/** Inputs of one build with the real effects (defaultBuildEffects). `asOf` is Unix seconds; the build is a pure function of these. */
export interface BuildOptions extends BuildParams {
  captureDir: string;
  sink: PublishSink;
  /** Persistent warehouse file holding history tables across builds; null for none. */
  warehousePath: string | null;
  /** On-chain ledger written by the ingestion jobs (`BALLAST_ONCHAIN_LEDGER`); null/absent for none. */
  onchainLedgerPath?: string | null;
  /** Parent of the run's scratch folder (BALLAST_SCRATCH_DIR, default `<BALLAST_DATA_DIR>/scratch` in the CLI; here the OS temp dir). */
  scratchDir?: string;
}

/** What a build did. Sweep/retention counts live here, not in the (byte-reproducible) manifest. */
export interface BuildResult {
  /** The serving manifest (the stored one when an identical build was reused). */
  manifest: BuildManifest;
  /** `builds/<id>/manifest.json`, and where it lives: an absolute path (fs), `s3://<bucket>/<key>` or `memory://<key>`. */
  manifestKey: string;
  manifestLocation: string;
  /** True when a complete build with this id existed and only the pointer was rewritten. */
  reused: boolean;
  /** `runs/<runId>.json`: this run's record (RunRecordSchema), written also when the build was reused. */
  runKey: string;
  swept: SweepReport;
  /** Null when retention failed after publishing (logged as a warning; the build still serves). */
  retention: RetentionReport | null;
  /** The dated snapshot of the UTC day the as-of closes (publishClosedDay); null when the as-of is not a UTC midnight. */
  daySnapshot: DaySnapshotResult | null;
  /** Time of the whole build (ms) on the effects' clock (the wall clock by default; 0 on a fixed clock). */
  ms: number;
}

/**
 * Runs one build: sweep leftovers of a killed run → load + model (build/stages/model.ts) → emit
 * (EMITTERS, zod-checked) → publish (files with .br/.gz siblings, manifest, dated copies, warehouse
 * history, then `latest.json`) → run record (`runs/<runId>.json`, also for a reused or failed build)
 * → retention. Any error before the pointer moves leaves the previous build serving.
 *
 * `runBuild(opts)` reads and writes the places `opts` names (defaultBuildEffects: capture dir + live
 * `raw/` of the sink, warehouse and ledger files, OS temp dir, system clock, stderr logs);
 * `runBuild(params, effects)` touches only `effects` (e.g. memoryEffects, build/memory-effects.ts).
 * Scratch files go to a `ballast-build-<pid>-*` folder under `effects.scratchDir`, removed when the run ends
 * (those of killed runs by the next run: build/scratch.ts).
 * Throws source errors (a missing capture directory names BALLAST_CAPTURE_DIR), ModelError and ArtifactError.
 */
export async function runBuild(opts: BuildOptions): Promise<BuildResult>;
export async function runBuild(params: BuildParams, effects: BuildEffects): Promise<BuildResult>;
export async function runBuild(params: BuildParams | BuildOptions, effects?: BuildEffects): Promise<BuildResult> {
  // Without effects, the capture dir is checked first: a first run without ../shared fails with one line, before touching the sink.
  const fx = effects ?? defaultBuildEffects(params as BuildOptions);
  const { sink, logger, clock } = fx;
  const t0 = clock.now();
  const swept = await sweepLeftovers(sink, logger);
  await sweepScratch(fx.scratchDir, logger);
  let manifest: BuildManifest | null = null;
  let work: string | null = null;
  try {
    await mkdir(fx.scratchDir, { recursive: true });
    work = await mkdtemp(join(fx.scratchDir, scratchPrefix("build")));
    const modelled = await loadAndModel({
      asOf: params.asOf,
      registry: params.registry,
      effects: fx,
      spillDir: join(work, "duckdb"),
    });
    const { db } = modelled;
    try {
      const emitted = await emitBuild(
        {
          db,
          asOf: modelled.asOf,
          asOfDay: modelled.asOfDay,
          sourceObservedAt: modelled.sourceObservedAt,
          inputsSha256: inputsDigest(modelled.captures),
          storedSha256: async (key) => {
            const bytes = await sink.get(key);
            return bytes ? sha256(bytes) : null;
          },
          ogCache: fx.ogCache ?? null,
        },
        EMITTERS,
        { scratchDir: work, logger, spoolDir: join(work, "spool") },
      );
      manifest = assembleManifest(modelled, emitted, await readCircuits(sink));
      const warehouse = fx.warehouse;
      const published = await publishBuild(sink, manifest, emitted, {
        beforePointer: warehouse ? () => warehouse.commit(db) : undefined,
        logger,
      });
      const daySnapshot = await publishClosedDay(params, fx, join(work, "snapshot-duckdb"));
      const runKey = await writeRunRecord(sink, clock, {
        status: published.reused ? "reused" : "published",
        asOf: params.asOf,
        startedAt: t0,
        buildId: manifest.buildId,
        error: null,
        differsFromPublished: published.reused ? manifestDifferences(published.manifest, manifest) : [],
        manifest,
      });
      const retention = await applyRetention(sink, { keepBuilds: params.keepBuilds ?? 5, logger }).catch(
        (err: Error) => {
          logger("warn", "publish", `retention failed (the build is published): ${err.message}`);
          return null;
        },
      );
      const ms = clock.now() - t0;
      logger("info", "publish", "build published", {
        buildId: published.manifest.buildId,
        files: published.manifest.files.length,
        reused: published.reused,
        objectsWritten: published.objectsWritten,
        runKey,
        daySnapshot,
        ms,
      });
      return {
        ...published,
        manifestLocation: sink.describe(published.manifestKey),
        runKey,
        swept,
        retention,
        daySnapshot,
        ms,
      };
    } finally {
      db.close();
    }
  } catch (err) {
    await writeRunRecord(sink, clock, {
      status: "failed",
      asOf: params.asOf,
      startedAt: t0,
      buildId: manifest?.buildId ?? null,
      error: (err as Error).message,
      differsFromPublished: [],
      manifest,
    }).catch((e: Error) => logger("warn", "publish", `run record of a failed build not written: ${e.message}`));
    throw err;
  } finally {
    if (work) await rm(work, { recursive: true, force: true });
  }
}

/** What publishClosedDay did for UTC day `day` (`YYYY-MM-DD`); `error` only when `failed`. */
export interface DaySnapshotResult {
  day: string;
  /** `published`: written now; `kept`: already stored (dated objects are written once); `failed`: see `error`. */
  outcome: "published" | "kept" | "failed";
  error?: string;
}

/**
 * The day-closing snapshot (issue 31): when as-of (Unix s) is a UTC midnight it closes the day before, and
 * the build publishes that day's dated snapshot, digest and DuckDB file (build/snapshots.ts composeSnapshot
 * from the build's own captures, without warehouse history, so `verify-snapshot` rebuilds it byte for byte;
 * publishSnapshot, which adds the index rows). A day already stored is kept as it is, never rewritten.
 * Runs after the build is published, so a failure here is logged (level error) and reported as `failed`
 * without unpublishing the build. Null when as-of is not a UTC midnight (a live build mid-day).
 */
async function publishClosedDay(
  params: BuildParams,
  fx: BuildEffects,
  spillDir: string,
): Promise<DaySnapshotResult | null> {
  if (params.asOf % 86400 !== 0) return null;
  const day = utcDay(params.asOf - 86400);
  try {
    if (await fx.sink.get(snapshotKey(day))) return { day, outcome: "kept" };
    const composed = await composeSnapshot(day, {
      captures: fx.captures,
      sink: fx.sink,
      registry: params.registry,
      spillDir,
      logger: fx.logger,
      stagedCache: fx.stagedCache,
    });
    return { day, outcome: (await publishSnapshot(fx.sink, day, composed)) ? "published" : "kept" };
  } catch (err) {
    const error = (err as Error).message;
    fx.logger("error", "publish", `dated snapshot of ${day} not published (the build is): ${error}`);
    return { day, outcome: "failed", error };
  }
}

/** Run records kept under `runs/` (newest by key); older ones are deleted after each run. */
export const RUN_RECORDS_KEPT = 200;

/**
 * Top-level manifest fields whose JSON differs between the published manifest and this run's. The
 * researchers' DuckDB file is left out of `files`: its bytes differ on every run (DuckDB's file format).
 */
export function manifestDifferences(published: BuildManifest, run: BuildManifest): string[] {
  // Both through the schema, so key order is the schema's (a stored manifest was parsed, a fresh one was assembled).
  const stable = (m: BuildManifest) => {
    const p = BuildManifestSchema.parse(m);
    return { ...p, files: p.files.filter((f) => f.artifact !== "duckdb") };
  };
  const a = stable(published),
    b = stable(run);
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort() as (keyof BuildManifest)[];
  return keys.filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}

/**
 * Writes `runs/<runId>.json` (RunRecordSchema; `runId` = `clock` stamp of the start to the millisecond
 * + build id, or `failed`; `startedAt`/`finishedAt` Unix s on `clock`) and prunes run records beyond
 * RUN_RECORDS_KEPT. Returns the key written.
 */
async function writeRunRecord(
  sink: Sink,
  clock: Clock,
  run: Omit<RunRecord, "runId" | "finishedAt" | "startedAt"> & { startedAt: number },
): Promise<string> {
  const stamp = new Date(run.startedAt).toISOString().replace(/[-:]/g, "").replace(".", "");
  const runId = `${stamp}-${run.buildId ?? "failed"}`;
  const record = RunRecordSchema.parse({
    ...run,
    runId,
    startedAt: Math.floor(run.startedAt / 1000),
    finishedAt: Math.floor(clock.now() / 1000),
  });
  const key = `runs/${runId}.json`;
  await sink.put(key, toJson(record));
  const all = await sink.list("runs/");
  for (const old of all.slice(0, Math.max(0, all.length - RUN_RECORDS_KEPT))) await sink.delete(old);
  return key;
}
