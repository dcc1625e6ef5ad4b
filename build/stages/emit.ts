import type { OgImageCache } from "../og/cache.ts";
import { scratchPrefix } from "../scratch.ts";
import { createHash } from "node:crypto";
import { createReadStream, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { z } from "zod";
import type { Artifact } from "../../site-data/contract.ts";
import { type BuildManifest, type ManifestFile, MANIFEST_SCHEMA_VERSION } from "../../site-data/manifest.ts";
import { sha256 } from "../captures.ts";
import type { Db } from "../duckdb.ts";
import { log, type Logger } from "../log.ts";
import { isCompressible, STORED_ENCODINGS } from "../precompress.ts";
import type { Sink } from "../sinks/sink.ts";
import type { ModelledBuild } from "./model.ts";

/**
 * A body written to the build's spool folder instead of being held in memory until publish (see
 * EmitContext.spool): the file, its length in bytes and its sha256 (hex).
 */
export interface SpooledBody {
  spooled: string;
  bytes: number;
  sha256: string;
}

/** The bytes of a published file: text (UTF-8), binary, or spooled to a local scratch file. */
export type Body = string | Uint8Array | SpooledBody;

/** Bodies at least this long (bytes) are spooled when the build has a spool folder. */
export const SPOOL_FROM_BYTES = 1024 * 1024;

/** Whether a body is spooled (its bytes are in a file, not in memory). */
export const isSpooled = (body: Body): body is SpooledBody => typeof body === "object" && "spooled" in body;

/** Length of a body in bytes (UTF-8 for text). */
export function bodyLength(body: Body): number {
  if (isSpooled(body)) return body.bytes;
  return typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
}

/** sha256 (hex) of a body's bytes. */
export function bodySha256(body: Body): string {
  return isSpooled(body) ? body.sha256 : sha256(body);
}

/** A body's bytes in memory: a spooled one is read back from its file. */
export async function bodyBytes(body: Body): Promise<string | Uint8Array> {
  return isSpooled(body) ? readFile(body.spooled) : body;
}

/** A body as UTF-8 text (a spooled one is read back from its file). */
function bodyText(body: Body): string {
  if (isSpooled(body)) return readFileSync(body.spooled, "utf8");
  return typeof body === "string" ? body : Buffer.from(body).toString("utf8");
}

/**
 * The payload an earlier emitter of this build wrote at `artifact`'s main output (`files`: build path →
 * body, as EmitContext.emitted or an EmittedBuild holds them), parsed with `schema`; null when the build
 * has no such file or it fails the schema. Readers of emitted payloads (OG images, dated snapshots) use it.
 */
export function emittedPayload<S extends z.ZodType>(
  files: ReadonlyMap<string, Body>,
  artifact: Artifact,
  schema: S,
): z.infer<S> | null {
  const body = files.get(artifact.outputs.main.path);
  if (body === undefined) return null;
  const res = schema.safeParse(JSON.parse(bodyText(body)));
  return res.success ? res.data : null;
}

/**
 * Spooling of one build's large bodies into `dir` (created on first use), or none without a folder:
 * `spool` returns bodies shorter than SPOOL_FROM_BYTES (and spooled ones) as they are, and writes longer
 * ones to a file of their own, returning a SpooledBody; `{ file }` (a file an emitter wrote) is moved
 * into the folder rather than read (without a folder it is read into memory). The caller removes the
 * folder after publish.
 */
function spooler(dir: string | undefined): (body: Body | { file: string }) => Promise<Body> {
  let n = 0;
  let made = false;
  const next = async () => {
    if (!dir) throw new Error("no spool folder");
    if (!made) await mkdir(dir, { recursive: true });
    made = true;
    return join(dir, String(n++));
  };
  return async (body) => {
    if (typeof body === "object" && "file" in body) {
      if (!dir) return readFile(body.file);
      const path = await next();
      await rename(body.file, path);
      const hash = createHash("sha256");
      for await (const chunk of createReadStream(path)) hash.update(chunk);
      return { spooled: path, bytes: (await stat(path)).size, sha256: hash.digest("hex") };
    }
    const bytes = bodyLength(body);
    if (!dir || isSpooled(body) || bytes < SPOOL_FROM_BYTES) return body;
    const path = await next();
    await writeFile(path, body);
    return { spooled: path, bytes, sha256: sha256(body) };
  };
}

/** Thrown when an emitted payload or dataset row fails its schema; names the artifact. */
export class ArtifactError extends Error {
  constructor(
    message: string,
    readonly artifact: string,
  ) {
    super(message);
    this.name = "ArtifactError";
  }
}

/** `2025-09-07T00:00:00Z` → `20250907T0000Z`: the first part of a build id. */
export function stampOf(asOf: number): string {
  return `${new Date(asOf * 1000).toISOString().replace(/[-:]/g, "").slice(0, 13)}Z`;
}

/** sha256 of the sorted `<path>:<sha256>` lines of the captures a build read (EmitContext.inputsSha256). */
export function inputsDigest(captures: readonly { path: string; sha256: string }[]): string {
  return sha256(
    captures
      .map((c) => `${c.path}:${c.sha256}`)
      .sort()
      .join("\n"),
  );
}

/** Stable JSON: object keys in insertion order (fixed by the contracts), newline-terminated. */
export function toJson(payload: unknown): string {
  return `${JSON.stringify(payload)}\n`;
}

/** What every emitter gets: the modelled database, as-of (Unix s) and its UTC day, newest capture per endpoint. */
export interface EmitContext {
  db: Db;
  asOf: number;
  /** `YYYY-MM-DD`. */
  asOfDay: string;
  /** Endpoint → newest capture used (Unix s), null when none. */
  sourceObservedAt: Record<string, number | null>;
  /** Private temp directory for intermediate files, removed after emit. */
  scratchDir: string;
  /** The build's logger (BuildEffects.logger). */
  logger: Logger;
  /** sha256 of the `<path>:<sha256>` lines of every capture the build read (sorted): names the inputs without the build id. */
  inputsSha256: string;
  /** Bodies of the files emitted by the emitters that ran before this one, by build path (e.g. site-data payloads for the OG images). */
  emitted: ReadonlyMap<string, Body>;
  /**
   * What to put in an EmittedFile for `body`: a large body is written to the build's spool folder (when
   * emitBuild was given one) so the build does not hold it in memory until publish; `{ file }` hands
   * over a file the emitter wrote under `scratchDir`. Small bodies come back as they are.
   */
  spool(body: Body | { file: string }): Promise<Body>;
  /**
   * sha256 (hex) of the object stored at `key` outside the build folders (a dated dataset file
   * `datasets/<topic>/<YYYY-MM-DD>.<fmt>`), or null when none is stored. Dated objects are write-once:
   * the datasets emitter asks it whether an earlier build of the same UTC day already published the
   * day's files. Absent: nothing is stored yet (a snapshot, a test without a sink).
   */
  storedSha256?: (key: string) => Promise<string | null>;
  /** Rendered OG images kept across builds (BuildEffects.ogCache, build/og/cache.ts); absent or null: every image is rendered. */
  ogCache?: OgImageCache | null;
}

/** Manifest fields an emitter sets on a file; path, sha256, bytes and encodings are filled in by emitBuild. */
export type ManifestExtras = Omit<ManifestFile, "path" | "sha256" | "bytes" | "encodings">;

/** One file of the build, under `builds/<id>/`. */
export interface EmittedFile {
  path: string;
  body: Body;
  extras: ManifestExtras;
  /** Bytes are not reproducible across runs (DuckDB's file format): left out of the content hash. */
  unstable?: true;
}

/**
 * An object published outside the build folder, e.g. `datasets/<topic>/<YYYY-MM-DD>.<fmt>`; pruned by
 * retention. Write-once: publishBuild writes it only where nothing is stored (same bytes: skipped;
 * other bytes: the publish fails before anything is written).
 */
export interface DatedCopy {
  key: string;
  body: Body;
}

/**
 * A build file whose bytes name the build id (e.g. `datasets/<topic>/datapackage.json`): rendered once
 * the id is known and left out of the content hash (its bytes are a function of the hashed files and
 * the id, so the build stays reproducible and the id has no cycle).
 */
export interface DeferredFile {
  path: string;
  extras: ManifestExtras;
  render(buildId: string): string | Uint8Array;
}

/** An emitter's output: its build files, the dated copies to publish beside them, and files rendered with the build id. */
export interface EmitterOutput {
  files: EmittedFile[];
  datedCopies: DatedCopy[];
  deferred?: DeferredFile[];
}

/**
 * One producer of published files (site-data, datasets, researchers' DuckDB, …). Throws ArtifactError
 * naming the artifact when a payload or row fails its schema.
 */
export interface Emitter {
  name: string;
  emit(ctx: EmitContext): Promise<EmitterOutput>;
  /**
   * Runs beside the emitters after it: started in its turn (seeing the files emitted before it),
   * awaited once the others are done. For work off the main thread (OG images render on a worker).
   */
  background?: true;
}

/** A build file with its manifest entry (sha256/bytes of the uncompressed body). */
export interface BuildFile {
  file: ManifestFile;
  body: Body;
  unstable?: true;
  /** Rendered with the build id (DeferredFile): reproducible, but left out of the content hash. */
  derived?: true;
}

/** Every file of a build, sorted by path, with the content hash and build id derived from them. */
export interface EmittedBuild {
  /** `<stamp>-<first 7 hex of contentHash>`. */
  buildId: string;
  /** sha256 of the `<path>:<sha256>` lines of every file with reproducible bytes, except files rendered with the build id. */
  contentHash: string;
  files: BuildFile[];
  datedCopies: DatedCopy[];
}

/**
 * Emit stage: runs `emitters` in order over one scratch directory (a fresh `ballast-emit-<pid>-*` folder
 * under `opts.scratchDir`, default the OS temp dir, removed afterwards; each sees the bodies its
 * predecessors emitted, `EmitContext.emitted`), fills in each file's sha256, bytes
 * and `encodings` (["br", "gzip"] for JSON/CSV/NDJSON, whose siblings publish writes), sorts files by
 * path and derives the content hash and build id (same inputs → same id). With `opts.spoolDir`, every
 * body of SPOOL_FROM_BYTES or more (files and dated copies) is kept in a file there rather than in
 * memory until publish (EmitContext.spool); the caller removes that folder. Throws ArtifactError from an
 * emitter, or an Error when two emitters claim one path.
 */
export async function emitBuild(
  ctx: Omit<EmitContext, "scratchDir" | "emitted" | "logger" | "spool">,
  emitters: readonly Emitter[],
  opts: { scratchDir?: string; logger?: Logger; spoolDir?: string } = {},
): Promise<EmittedBuild> {
  const scratchDir = await mkdtemp(join(opts.scratchDir ?? tmpdir(), scratchPrefix("emit")));
  const logger = opts.logger ?? log;
  const spool = spooler(opts.spoolDir);
  try {
    const files: BuildFile[] = [];
    const datedCopies: DatedCopy[] = [];
    const deferred: DeferredFile[] = [];
    const seen = new Map<string, string>();
    const claim = (path: string, emitter: string) => {
      if (seen.has(path)) throw new Error(`emitters ${seen.get(path)} and ${emitter} both emit ${path}`);
      seen.set(path, emitter);
    };
    const add = (f: Omit<EmittedFile, "unstable">, flag?: "unstable" | "derived") => {
      const encodings = isCompressible(f.path) ? { encodings: [...STORED_ENCODINGS] } : {};
      files.push({
        file: { path: f.path, sha256: bodySha256(f.body), bytes: bodyLength(f.body), ...f.extras, ...encodings },
        body: f.body,
        ...(flag ? { [flag]: true as const } : {}),
      });
    };
    const emitted = new Map<string, Body>();
    const background: { emitter: Emitter; started: number; out: Promise<EmitterOutput> }[] = [];
    const collect = async (emitter: Emitter, started: number, out: EmitterOutput) => {
      for (const f of out.files) {
        claim(f.path, emitter.name);
        const body = await spool(f.body);
        emitted.set(f.path, body);
        add({ ...f, body }, f.unstable ? "unstable" : undefined);
      }
      for (const d of out.deferred ?? []) claim(d.path, emitter.name);
      deferred.push(...(out.deferred ?? []));
      for (const c of out.datedCopies) datedCopies.push({ key: c.key, body: await spool(c.body) });
      logger("info", "emit", `emitter ${emitter.name}`, {
        files: out.files.length,
        ms: Math.round(performance.now() - started),
      });
    };
    try {
      for (const emitter of emitters) {
        const started = performance.now();
        const out = emitter.emit({ ...ctx, scratchDir, emitted: new Map(emitted), logger, spool });
        if (emitter.background) {
          out.catch(() => {}); // handled: awaited below (a rejection before then must not count as unhandled)
          background.push({ emitter, started, out });
        } else await collect(emitter, started, await out);
      }
      for (const b of background) await collect(b.emitter, b.started, await b.out);
    } finally {
      // A background emitter still running when another fails is waited for (it owns a worker).
      await Promise.allSettled(background.map((b) => b.out));
    }
    files.sort((a, b) => a.file.path.localeCompare(b.file.path));
    const contentHash = sha256(
      files
        .filter((f) => !f.unstable)
        .map((f) => `${f.file.path}:${f.file.sha256}`)
        .join("\n"),
    );
    const buildId = `${stampOf(ctx.asOf)}-${contentHash.slice(0, 7)}`;
    for (const d of deferred) add({ path: d.path, body: d.render(buildId), extras: d.extras }, "derived");
    files.sort((a, b) => a.file.path.localeCompare(b.file.path));
    return { buildId, contentHash, files, datedCopies };
  } finally {
    await rm(scratchDir, { recursive: true, force: true });
  }
}

/** Circuit states recorded by the last live capture (`raw/_circuits.json`), or {} when none ran. */
export async function readCircuits(sink: Sink): Promise<BuildManifest["circuits"]> {
  const bytes = await sink.get("raw/_circuits.json");
  return bytes ? JSON.parse(Buffer.from(bytes).toString("utf8")) : {};
}

/**
 * The build's manifest: files, sources with their captures, reader drops, circuits, model row counts,
 * quality rejections and warnings. `generatedAt` is the as-of, so the manifest is byte-reproducible;
 * `clock` is `replay` when every list capture was recorded.
 */
export function assembleManifest(
  modelled: Pick<
    ModelledBuild,
    | "asOf"
    | "captures"
    | "sources"
    | "readerDropped"
    | "readerProblems"
    | "modelRun"
    | "qualityRejections"
    | "warnings"
    | "skippedCaptures"
    | "sourceLineage"
  > &
    Partial<Pick<ModelledBuild, "depegVerdicts">>,
  emitted: EmittedBuild,
  circuits: BuildManifest["circuits"],
): BuildManifest {
  const replay = modelled.captures
    .filter((c) => c.endpoint === "defillama.stablecoins")
    .every((c) => c.origin === "recorded");
  return {
    schemaVersion: MANIFEST_SCHEMA_VERSION,
    buildId: emitted.buildId,
    asOf: modelled.asOf,
    generatedAt: modelled.asOf,
    clock: replay ? "replay" : "wall",
    contentHash: emitted.contentHash,
    files: emitted.files.map((f) => f.file),
    sources: modelled.sources.map((s) => ({
      endpoint: s.endpoint,
      status: s.status,
      rows: s.rows,
      dropped: s.dropped,
      newestObservedAt: s.newestObservedAt,
      captures: s.captures.map((c) => ({
        path: c.path,
        origin: c.origin,
        observedAt: c.observedAt,
        sha256: c.sha256,
        rows: c.rows,
        ...(c.rejected ? { rejected: c.rejected } : {}),
      })),
    })),
    readerDropped: modelled.readerDropped,
    readerProblems: modelled.readerProblems,
    circuits,
    models: modelled.modelRun.tables,
    qualityRejections: modelled.qualityRejections,
    warnings: modelled.warnings,
    skippedCaptures: modelled.skippedCaptures,
    sourceLineage: modelled.sourceLineage,
    ...(modelled.depegVerdicts?.length ? { depegVerdicts: modelled.depegVerdicts } : {}),
  };
}
