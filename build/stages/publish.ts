import { sweepAbandoned } from "../scratch.ts";
import { availableParallelism } from "node:os";
import pLimit from "p-limit";
import type { z } from "zod";
import { DATASET_RETENTION_DAYS } from "../../datasets/contract.ts";
import {
  type BuildManifest,
  BuildManifestSchema,
  LatestPointerSchema,
  type StoredEncoding,
} from "../../site-data/manifest.ts";
import { log, type Logger } from "../log.ts";
import { ENCODING_SUFFIX, encodeBody, isCompressible, STORED_ENCODINGS } from "../precompress.ts";
import type { PublishSink, Sink } from "../sinks/sink.ts";
import { utcDay } from "../time.ts";
import { sha256 } from "../captures.ts";
import { type Body, type BuildFile, bodyBytes, bodySha256, type DatedCopy, isSpooled, toJson } from "./emit.ts";

/** Key of the pointer to the serving build, written last. */
export const POINTER_KEY = "latest.json";

/** Objects written at once while publishing (fs writes and S3 puts both overlap well). */
const WRITE_CONCURRENCY = 8;

/** Folder of one build: `builds/<id>/`. */
export const buildPrefix = (buildId: string) => `builds/${buildId}/`;
/** Manifest of one build, written after every other file of it: its presence marks a complete build. */
export const manifestKeyOf = (buildId: string) => `builds/${buildId}/manifest.json`;

/** The serving build's pointer, or null when there is none or it does not parse. */
export async function readPointer(sink: Sink): Promise<z.infer<typeof LatestPointerSchema> | null> {
  const bytes = await sink.get(POINTER_KEY);
  if (!bytes) return null;
  try {
    const res = LatestPointerSchema.safeParse(JSON.parse(Buffer.from(bytes).toString("utf8")));
    return res.success ? res.data : null;
  } catch {
    return null;
  }
}

/** A complete build as retention orders it: manifest asOf and generatedAt (Unix s), then build id. */
export interface BuildSummary {
  buildId: string;
  asOf: number;
  generatedAt: number;
}

const SummarySchema = BuildManifestSchema.pick({ buildId: true, asOf: true, generatedAt: true });

/** Every folder under `builds/` with its manifest bytes (null: no manifest, a partial build). */
async function buildFolders(sink: PublishSink): Promise<{ buildId: string; manifest: Uint8Array | null }[]> {
  return Promise.all(
    (await sink.listDirs("builds/")).map(async (buildId) => ({
      buildId,
      manifest: await sink.get(manifestKeyOf(buildId)),
    })),
  );
}

/** The summary of a stored manifest, or null when it does not parse. */
function summaryOf(buildId: string, manifest: Uint8Array): BuildSummary | null {
  try {
    const res = SummarySchema.safeParse(JSON.parse(Buffer.from(manifest).toString("utf8")));
    return res.success ? { ...res.data, buildId } : null;
  } catch {
    return null;
  }
}

/** What sweepLeftovers removed. */
export interface SweepReport {
  /** Temporary files of killed writers (fs `*.tmp`), as keys. */
  abandonedFiles: string[];
  /** Build folders without a manifest (a killed build), by build id. */
  partialBuilds: string[];
}

/**
 * Removes what a killed run left: temporary files whose writer is gone (PublishSink.listAbandoned) and
 * build folders under `builds/` without `manifest.json`, never the folder the pointer names. Run at the
 * start of a build (nothing of this run is in flight yet). Logs what it removed (to `logger`, default
 * stderr); returns it.
 */
export async function sweepLeftovers(sink: PublishSink, logger: Logger = log): Promise<SweepReport> {
  const serving = (await readPointer(sink))?.buildId;
  // Build folders are not searched: a temp file can only be in a partial one (its manifest is renamed
  // into place last), and those go whole below.
  const abandonedFiles = await sweepAbandoned(sink, ["builds/"]);
  const partialBuilds = (await buildFolders(sink))
    .filter((b) => b.manifest === null && b.buildId !== serving)
    .map((b) => b.buildId);
  for (const id of partialBuilds) await sink.deletePrefix(buildPrefix(id));
  if (abandonedFiles.length || partialBuilds.length)
    logger("info", "publish", "swept leftovers of a killed run", { abandonedFiles, partialBuilds });
  return { abandonedFiles, partialBuilds };
}

/**
 * Writes `key` and its precompressed siblings `<key>.br` / `<key>.gz` for the given encodings (computed
 * once per body hash: a dated copy reuses its build file's). A spooled body is read back only for its
 * own writes, at most SPOOLED_AT_ONCE at a time. Returns the number of objects written.
 */
type ObjectWriter = (
  key: string,
  body: Body,
  hash: string,
  encodings: readonly StoredEncoding[],
  /** Put the siblings first and `key` after them (a dated copy: its presence then implies its siblings'). */
  keyLast?: boolean,
) => Promise<number>;

/** Spooled bodies (large files) read back into memory at once while publishing. */
const SPOOLED_AT_ONCE = 2;

function objectWriter(sink: Sink): ObjectWriter {
  const limit = pLimit(WRITE_CONCURRENCY);
  const encodeLimit = pLimit(availableParallelism());
  const spooledLimit = pLimit(SPOOLED_AT_ONCE);
  const encoded = new Map<string, ReturnType<typeof encodeBody>>();
  const write = async (
    key: string,
    body: string | Uint8Array,
    hash: string,
    encodings: readonly StoredEncoding[],
    keyLast: boolean,
  ): Promise<number> => {
    const puts: Promise<void>[] = keyLast ? [] : [limit(() => sink.put(key, body))];
    if (encodings.length) {
      let siblings = encoded.get(hash);
      if (!siblings) {
        siblings = encodeLimit(() => encodeBody(body));
        encoded.set(hash, siblings);
      }
      const ready = await siblings;
      for (const enc of encodings) puts.push(limit(() => sink.put(`${key}${ENCODING_SUFFIX[enc]}`, ready[enc])));
    }
    await Promise.all(puts);
    if (keyLast) await limit(() => sink.put(key, body));
    return puts.length + (keyLast ? 1 : 0);
  };
  return (key, body, hash, encodings, keyLast = false) =>
    isSpooled(body)
      ? spooledLimit(async () => write(key, await bodyBytes(body), hash, encodings, keyLast))
      : write(key, body, hash, encodings, keyLast);
}

/** Result of publishBuild. */
export interface PublishResult {
  /** The serving manifest: the one written, or the stored one when the build was reused. */
  manifest: BuildManifest;
  /** `builds/<id>/manifest.json`. */
  manifestKey: string;
  /** True when `builds/<id>/manifest.json` already existed: nothing was written into that folder. */
  reused: boolean;
  /** Objects put (files, compressed siblings, dated copies, manifest, pointer). */
  objectsWritten: number;
  /** Dated copies written by this publish (keys without siblings); the others were stored already, byte-identical. */
  datedWritten: string[];
}

/**
 * The dated copies (write-once) with nothing stored at their key yet: the ones to write (a copy stored
 * with the same bytes is left out). Throws naming the first key stored with other bytes: the first
 * publication of a date owns it, and the datasets emitter only hands over copies of a day it owns
 * (EmitContext.storedSha256), so other bytes mean another build published the day meanwhile.
 */
async function datedToWrite(sink: Sink, copies: readonly DatedCopy[]): Promise<DatedCopy[]> {
  const absent: DatedCopy[] = [];
  for (const c of copies) {
    const stored = await sink.get(c.key);
    if (!stored) absent.push(c);
    else if (sha256(stored) !== bodySha256(c.body))
      throw new Error(
        `${c.key} is already published with other bytes (dated files are write-once: another build of this day published it first); not overwriting it, rebuild to serve under this build's latest.*`,
      );
  }
  return absent;
}

/**
 * Publish stage, in this order:
 * 1. Build files into `builds/<id>/` (each with the `<path>.br` / `<path>.gz` its manifest `encodings` name), then
 *    `manifest.json` last. Skipped entirely when `builds/<id>/manifest.json` exists: a complete build
 *    with this id (same as-of stamp and content) is reused as-is, so a served folder is never written.
 * 2. Dated copies (`datasets/<topic>/<day>.<fmt>`) that are not stored yet, each after its `.br`/`.gz`
 *    siblings. Dated files are write-once: a copy stored with the same bytes is skipped, and one stored
 *    with other bytes fails the publish before step 1 (checked first, and again just before the put).
 * 3. `beforePointer` (committing warehouse history), so a serving build's history is always persisted.
 * 4. `latest.json`.
 * Any error before step 4 leaves the previous build serving. Throws when a stored manifest with this
 * id has another content hash (an id collision) rather than serving different bytes, or when a dated
 * copy is stored with other bytes.
 */
export async function publishBuild(
  sink: Sink,
  manifest: BuildManifest,
  build: { files: BuildFile[]; datedCopies: DatedCopy[] },
  opts: { beforePointer?: () => Promise<void>; logger?: Logger } = {},
): Promise<PublishResult> {
  const manifestKey = manifestKeyOf(manifest.buildId);
  const write = objectWriter(sink);
  let objectsWritten = 0;
  await datedToWrite(sink, build.datedCopies);
  const stored = await sink.get(manifestKey);
  let serving = manifest;
  if (stored) {
    serving = BuildManifestSchema.parse(JSON.parse(Buffer.from(stored).toString("utf8")));
    if (serving.contentHash !== manifest.contentHash) {
      throw new Error(
        `build ${manifest.buildId} already exists with another content hash (${serving.contentHash.slice(0, 12)} ≠ ${manifest.contentHash.slice(0, 12)}); not overwriting a published build`,
      );
    }
    (opts.logger ?? log)("info", "publish", "complete build with this id exists; reusing it as-is", {
      buildId: manifest.buildId,
    });
  } else {
    const prefix = buildPrefix(manifest.buildId);
    const counts = await Promise.all(
      build.files.map((f) => write(`${prefix}${f.file.path}`, f.body, f.file.sha256, f.file.encodings ?? [])),
    );
    objectsWritten += counts.reduce((a, b) => a + b, 0);
    await sink.put(manifestKey, toJson(manifest));
    objectsWritten++;
  }
  const absent = await datedToWrite(sink, build.datedCopies);
  const copies = await Promise.all(
    absent.map((c) => write(c.key, c.body, bodySha256(c.body), isCompressible(c.key) ? STORED_ENCODINGS : [], true)),
  );
  objectsWritten += copies.reduce((a, b) => a + b, 0);
  await opts.beforePointer?.();
  await sink.put(POINTER_KEY, toJson({ buildId: serving.buildId, asOf: serving.asOf, manifest: manifestKey }));
  return {
    manifest: serving,
    manifestKey,
    reused: stored !== null,
    objectsWritten: objectsWritten + 1,
    datedWritten: absent.map((c) => c.key),
  };
}

/** First UTC day (`YYYY-MM-DD`) inside the dataset retention window ending on the newest as-of (Unix s). */
export function retentionCutoffDay(newestAsOf: number): string {
  return utcDay(newestAsOf - DATASET_RETENTION_DAYS * 86400);
}

/** Newest first: asOf, then generatedAt, then build id. */
const newestFirst = (a: BuildSummary, b: BuildSummary) =>
  b.asOf - a.asOf || b.generatedAt - a.generatedAt || b.buildId.localeCompare(a.buildId);

/**
 * Build ids retention keeps: the `keepBuilds` newest, the serving one, and for every UTC as-of day
 * from retentionCutoffDay(newest as-of) on, the newest build of that day (the build a dated file of
 * that day is served from). Pure.
 */
export function buildsToKeep(
  builds: readonly BuildSummary[],
  servingBuildId: string | null,
  keepBuilds: number,
): Set<string> {
  const ordered = [...builds].sort(newestFirst);
  const keep = new Set(ordered.slice(0, keepBuilds).map((b) => b.buildId));
  if (servingBuildId) keep.add(servingBuildId);
  if (ordered.length === 0) return keep;
  const cutoff = retentionCutoffDay(ordered[0].asOf);
  const days = new Set<string>();
  for (const b of ordered) {
    const day = utcDay(b.asOf);
    if (day < cutoff || days.has(day)) continue;
    days.add(day);
    keep.add(b.buildId);
  }
  return keep;
}

/** Dated dataset files and their compressed siblings: `datasets/<topic>/<YYYY-MM-DD>.<fmt>[.br|.gz]`. */
const DATED_FILE = /^datasets\/[^/]+\/(\d{4}-\d{2}-\d{2})\.(?:csv|json|ndjson|parquet)(?:\.br|\.gz)?$/;

/** What applyRetention deleted and kept. */
export interface RetentionReport {
  /** Complete builds kept, newest first. */
  keptBuilds: string[];
  /** Complete builds deleted (every object of their folder). */
  deletedBuilds: string[];
  /** Dated dataset keys deleted (files and their `.br`/`.gz` siblings). */
  deletedDatedFiles: string[];
  /** Build folders whose manifest does not parse: kept, logged. */
  unreadableBuilds: string[];
}

/**
 * Retention after a publish: deletes every complete build buildsToKeep does not keep (folders without
 * a manifest are left to sweepLeftovers), and dated dataset files (with siblings) dated before the
 * window ending on the newest build's as-of day. Logs what it deleted (to `opts.logger`, default stderr).
 */
export async function applyRetention(
  sink: PublishSink,
  opts: { keepBuilds: number; logger?: Logger },
): Promise<RetentionReport> {
  const logger = opts.logger ?? log;
  const serving = (await readPointer(sink))?.buildId ?? null;
  const complete: BuildSummary[] = [];
  const unreadable: string[] = [];
  for (const { buildId, manifest } of await buildFolders(sink)) {
    if (!manifest) continue;
    const summary = summaryOf(buildId, manifest);
    if (summary) complete.push(summary);
    else unreadable.push(buildId);
  }
  const keep = buildsToKeep(complete, serving, opts.keepBuilds);
  const ordered = [...complete].sort(newestFirst);
  const deletedBuilds = ordered.filter((b) => !keep.has(b.buildId)).map((b) => b.buildId);
  for (const id of deletedBuilds) await sink.deletePrefix(buildPrefix(id));
  const cutoff = ordered.length ? retentionCutoffDay(ordered[0].asOf) : null;
  const deletedDatedFiles = cutoff
    ? (await sink.list("datasets/")).filter((k) => {
        const day = DATED_FILE.exec(k)?.[1];
        return day !== undefined && day < cutoff;
      })
    : [];
  for (const key of deletedDatedFiles) await sink.delete(key);
  if (unreadable.length)
    logger("warn", "publish", "build folders with an unreadable manifest kept", { builds: unreadable });
  if (deletedBuilds.length || deletedDatedFiles.length)
    logger("info", "publish", "retention pruned", {
      deletedBuilds,
      deletedDatedFiles: deletedDatedFiles.length,
      cutoff,
    });
  return {
    keptBuilds: ordered.filter((b) => keep.has(b.buildId)).map((b) => b.buildId),
    deletedBuilds,
    deletedDatedFiles,
    unreadableBuilds: unreadable,
  };
}
