import type { Registry } from "../pipelines/registry/schema.ts";
import { type BuildManifest, BuildManifestSchema, type RunRecord, RunRecordSchema } from "../site-data/manifest.ts";
import { assertCaptureDir } from "./captures.ts";
import { log } from "./log.ts";
import type { PublishSink, Sink } from "./sinks/sink.ts";
import { assembleManifest, emitBuild, inputsDigest, readCircuits, toJson } from "./stages/emit.ts";
import { EMITTERS } from "./stages/emitters.ts";
import { loadAndModel } from "./stages/model.ts";
import { applyRetention, publishBuild, type RetentionReport, sweepLeftovers, type SweepReport } from "./stages/publish.ts";
import { persistHistory } from "./warehouse.ts";

/** Inputs of one build. `asOf` is Unix seconds; the build is a pure function of these. */
export interface BuildOptions {
  asOf: number;
  captureDir: string;
  sink: PublishSink;
  /** Persistent warehouse file holding history tables across builds; null for none. */
  warehousePath: string | null;
  registry?: Registry;
  /** On-chain ledger written by the ingestion jobs (`BALLAST_ONCHAIN_LEDGER`); null/absent for none. */
  onchainLedgerPath?: string | null;
  /** Newest complete builds retention keeps (BALLAST_KEEP_BUILDS; default 5). */
  keepBuilds?: number;
}

/** What a build did. Sweep/retention counts live here, not in the (byte-reproducible) manifest. */
export interface BuildResult {
  /** The serving manifest (the stored one when an identical build was reused). */
  manifest: BuildManifest;
  /** `builds/<id>/manifest.json`, and where it lives: an absolute path (fs) or `s3://<bucket>/<key>`. */
  manifestKey: string;
  manifestLocation: string;
  /** True when a complete build with this id existed and only the pointer was rewritten. */
  reused: boolean;
  /** `runs/<runId>.json`: this run's record (RunRecordSchema), written also when the build was reused. */
  runKey: string;
  swept: SweepReport;
  /** Null when retention failed after publishing (logged as a warning; the build still serves). */
  retention: RetentionReport | null;
  /** Wall time of the whole build (ms). */
  ms: number;
}

/**
 * Runs one build: sweep leftovers of a killed run → load + model (build/stages/model.ts) → emit
 * (EMITTERS, zod-checked) → publish (files with .br/.gz siblings, manifest, dated copies, warehouse
 * history, then `latest.json`) → run record (`runs/<runId>.json`, also for a reused or failed build)
 * → retention. Any error before the pointer moves leaves the previous build serving. Throws source errors (a missing capture directory names BALLAST_CAPTURE_DIR),
 * ModelError and ArtifactError.
 */
export async function runBuild(opts: BuildOptions): Promise<BuildResult> {
  const t0 = Date.now();
  assertCaptureDir(opts.captureDir); // a first run without ../shared fails with one line, before touching the sink
  const swept = await sweepLeftovers(opts.sink);
  let manifest: BuildManifest | null = null;
  try {
    const modelled = await loadAndModel({ asOf: opts.asOf, captureDir: opts.captureDir, registry: opts.registry, warehousePath: opts.warehousePath, sink: opts.sink, onchainLedgerPath: opts.onchainLedgerPath });
    const { db } = modelled;
    try {
      const emitted = await emitBuild({ db, asOf: modelled.asOf, asOfDay: modelled.asOfDay, sourceObservedAt: modelled.sourceObservedAt, inputsSha256: inputsDigest(modelled.captures) }, EMITTERS);
      manifest = assembleManifest(modelled, emitted, await readCircuits(opts.sink));
      const warehouse = opts.warehousePath;
      const published = await publishBuild(opts.sink, manifest, emitted, { beforePointer: warehouse ? () => persistHistory(db, warehouse) : undefined });
      const runKey = await writeRunRecord(opts.sink, {
        status: published.reused ? "reused" : "published", asOf: opts.asOf, startedAt: t0, buildId: manifest.buildId, error: null,
        differsFromPublished: published.reused ? manifestDifferences(published.manifest, manifest) : [], manifest,
      });
      const retention = await applyRetention(opts.sink, { keepBuilds: opts.keepBuilds ?? 5 }).catch((err: Error) => {
        log("warn", "publish", `retention failed (the build is published): ${err.message}`);
        return null;
      });
      const ms = Date.now() - t0;
      log("info", "publish", "build published", { buildId: published.manifest.buildId, files: published.manifest.files.length, reused: published.reused, objectsWritten: published.objectsWritten, runKey, ms });
      return { ...published, manifestLocation: opts.sink.describe(published.manifestKey), runKey, swept, retention, ms };
    } finally {
      db.close();
    }
  } catch (err) {
    await writeRunRecord(opts.sink, {
      status: "failed", asOf: opts.asOf, startedAt: t0, buildId: manifest?.buildId ?? null, error: (err as Error).message, differsFromPublished: [], manifest,
    }).catch((e: Error) => log("warn", "publish", `run record of a failed build not written: ${e.message}`));
    throw err;
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
  const stable = (m: BuildManifest) => { const p = BuildManifestSchema.parse(m); return { ...p, files: p.files.filter((f) => f.artifact !== "duckdb") }; };
  const a = stable(published), b = stable(run);
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort() as (keyof BuildManifest)[];
  return keys.filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}

/**
 * Writes `runs/<runId>.json` (RunRecordSchema; `runId` = wall-clock stamp to the millisecond + build id,
 * or `failed`) and prunes run records beyond RUN_RECORDS_KEPT. Returns the key written.
 */
async function writeRunRecord(sink: Sink, run: Omit<RunRecord, "runId" | "finishedAt" | "startedAt"> & { startedAt: number }): Promise<string> {
  const stamp = new Date(run.startedAt).toISOString().replace(/[-:]/g, "").replace(".", "");
  const runId = `${stamp}-${run.buildId ?? "failed"}`;
  const record = RunRecordSchema.parse({ ...run, runId, startedAt: Math.floor(run.startedAt / 1000), finishedAt: Math.floor(Date.now() / 1000) });
  const key = `runs/${runId}.json`;
  await sink.put(key, toJson(record));
  const all = await sink.list("runs/");
  for (const old of all.slice(0, Math.max(0, all.length - RUN_RECORDS_KEPT))) await sink.delete(old);
  return key;
}
