import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { ENDPOINTS } from "../pipelines/sources/endpoints.ts";
import { parseJsonText } from "../pipelines/sources/file-formats.ts";
import { RECORDED_CAPTURES } from "../pipelines/sources/recorded-captures.ts";
import type { RecordedCapture } from "../pipelines/sources/recorded-captures.ts";
import type { Capture, CaptureInfo, ReaderOutput, ReaderProblem } from "../pipelines/sources/types.ts";
import type { SkippedCapture } from "../site-data/manifest.ts";
import type { Sink } from "./sinks/sink.ts";
import { NOT_READ, type StagedCache } from "./staged-cache.ts";

/** Raw capture file written by `capture`: `raw/<source>/<YYYY-MM-DD>/<capture-id>.json[.gz]`. */
export interface RawCaptureFile {
  endpoint: string;
  params: Record<string, string>;
  observedAt: number;
  payload: unknown;
}

export const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest("hex");

/**
 * Receives one capture as soon as it is read (the load stage stages its rows); the capture source
 * awaits it before reading the next file and keeps no reference to the payload, so a build holds one
 * file's payloads at a time.
 */
export type CaptureHandler = (info: CaptureInfo, payload: unknown) => Promise<void>;

/** The captures a build uses (without payloads: each was handed to a CaptureHandler when read) plus reader-level drop counts (e.g. unmapped rows of a recorded file). */
export interface CaptureSet {
  /** The captures selected at as-of, in load order (selectAtAsOf). */
  captures: CaptureInfo[];
  /** file (relative to the capture dir) → reason → rows the reader skipped (`csv-parse-error`, `off-day-boundary`, …). */
  readerDropped: Record<string, Record<string, number>>;
  /** file → first few located problems (1-based line, code, message), for logs / the manifest. */
  readerProblems: Record<string, ReaderProblem[]>;
  /** Optional recorded captures skipped because they hold no data (→ manifest `skippedCaptures`, health). */
  skippedCaptures: SkippedCapture[];
}

/**
 * Why a recorded file holds no data, or null when it does: `empty-file` when it has no non-blank
 * byte (a 0-byte JSON or CSV), `header-only` when a `.csv` has its header line and no other
 * non-blank line.
 */
export function emptinessOf(file: string, text: string): SkippedCapture["reason"] | null {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "");
  if (lines.length === 0) return "empty-file";
  if (file.endsWith(".csv") && lines.length === 1) return "header-only";
  return null;
}

/** Reads the file with `read`, re-throwing any failure as an Error naming the file. */
function readOrThrow<T>(file: string, what: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    throw new Error(`${what} ${file}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * Throws one line naming the fix when the recorded capture directory is missing (first run without
 * `../shared` beside the checkout): `capture directory <dir> not found: put the recorded data at
 * ../shared/data beside the checkout or set BALLAST_CAPTURE_DIR`.
 */
export function assertCaptureDir(captureDir: string): void {
  if (!existsSync(captureDir)) {
    throw new Error(
      `capture directory ${captureDir} not found: put the recorded data at ../shared/data beside the checkout or set BALLAST_CAPTURE_DIR`,
    );
  }
}

/** Reads one recorded file; a missing file throws an Error naming it and the capture directory setting. */
async function readRecorded(captureDir: string, file: string): Promise<Buffer> {
  try {
    return await readFile(join(captureDir, file));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    throw new Error(
      `recorded capture ${file} not found in capture directory ${captureDir} (BALLAST_CAPTURE_DIR): the recorded data is incomplete`,
      { cause: e },
    );
  }
}

/** Key of a live capture file: `raw/<source>/<YYYY-MM-DD>/<capture-id>.json[.gz]`. */
const RAW_CAPTURE_KEY = /^raw\/[^/]+\/\d{4}-\d{2}-\d{2}\/[^/]+\.json(\.gz)?$/;

/**
 * Capture reader of live captures written by `capture` into the sink (`raw/<source>/<day>/<id>.json[.gz]`,
 * e.g. `raw/bluechip/2025-09-06/bluechip.ratings-slug-usdc-1757199600.json.gz`): each file's endpoint,
 * params, observation time and payload, origin `live`, handed to `take` one file at a time; other keys
 * under `raw/` (`raw/_circuits.json`) are skipped. Unreadable files throw naming the key. Returns the
 * captures read, without payloads, in key order.
 */
export async function forEachLiveCapture(sink: Sink, take: CaptureHandler): Promise<CaptureInfo[]> {
  const out: CaptureInfo[] = [];
  for (const key of await sink.list("raw/")) {
    // Only capture files: `raw/_circuits.json` (circuit states of the last capture run) is not one.
    if (!RAW_CAPTURE_KEY.test(key)) continue;
    const bytes = await sink.get(key);
    if (!bytes) throw new Error(`raw capture ${key}: listed but not found in the storage`);
    const f = readOrThrow(key, "raw capture", () => {
      const text = key.endsWith(".gz") ? gunzipSync(bytes).toString("utf8") : Buffer.from(bytes).toString("utf8");
      return parseJsonText(text) as RawCaptureFile;
    });
    const info: CaptureInfo = {
      endpoint: f.endpoint,
      params: f.params,
      observedAt: f.observedAt,
      origin: "live",
      path: key,
      sha256: sha256(bytes),
    };
    out.push(info);
    await take(info, f.payload);
  }
  return out;
}

/** Every live capture in the sink with its payload (forEachLiveCapture, all held at once: for tools and tests). */
export async function readLiveCaptures(sink: Sink): Promise<Capture[]> {
  const out: Capture[] = [];
  await forEachLiveCapture(sink, async (info, payload) => {
    out.push({ ...info, payload });
  });
  return out;
}

/**
 * Reads one recorded file: its sha256 and the reader's output, or the reason it is skipped as empty.
 * Throws when the file is missing, unreadable (naming the file and position), or empty and required.
 * The file's text is released on return; only the reader's payloads live on.
 */
async function readRecordedFile(
  captureDir: string,
  rc: RecordedCapture,
  cache: StagedCache | null,
): Promise<{ hash: string; out: ReaderOutput } | { empty: SkippedCapture["reason"] }> {
  const bytes = await readRecorded(captureDir, rc.file);
  const hash = sha256(bytes);
  const fileKey = cache?.fileKeyOf(rc, hash) ?? null;
  const known = cache && fileKey ? cache.getFile(fileKey) : null;
  // A file read before whose every capture has its parsed rows cached is not read again.
  if (cache && known?.captures.every((c) => cache.has(recordedInfo(rc, c.params, hash))))
    return {
      hash,
      out: { ...known, captures: known.captures.map((c) => ({ params: c.params, payload: NOT_READ })) },
    };
  const text = bytes.toString("utf8");
  const empty = emptinessOf(rc.file, text);
  if (empty && rc.required) {
    throw new Error(
      `recorded capture ${rc.file} (${rc.endpoint}) is empty (${empty}) in capture directory ${captureDir} (BALLAST_CAPTURE_DIR): it is a required input, so the build stops as for a missing file`,
    );
  }
  if (empty) return { empty };
  const out = readOrThrow(join(captureDir, rc.file), `recorded capture (${rc.endpoint})`, () => rc.read(text));
  if (fileKey)
    await cache?.putFile(fileKey, {
      captures: out.captures.map((c) => ({ params: c.params })),
      dropped: out.dropped,
      ...(out.problems ? { problems: out.problems } : {}),
    });
  return { hash, out };
}

/** The CaptureInfo of a capture `params` of recorded file `rc` whose bytes hash to `hash`. */
function recordedInfo(rc: RecordedCapture, params: Record<string, string>, hash: string): CaptureInfo {
  return {
    endpoint: rc.endpoint,
    params: { ...rc.params, ...params },
    observedAt: rc.observedAt,
    origin: "recorded",
    path: rc.file,
    sha256: hash,
  };
}

/**
 * Every capture available at `asOf` (Unix s): recorded files from the capture dir and live raw
 * captures in the sink (none without a sink), read one file at a time and handed to `take` as read
 * (no payload is kept here). Returns the captures selected at as-of (selectAtAsOf: snapshot endpoints
 * keep only the newest capture per params observed at or before asOf; history endpoints keep all, rows
 * after asOf are filtered at load), without payloads, with the reader drops and skipped files.
 * A file that cannot be read at all (e.g. truncated JSON) throws an Error whose message names the
 * file path and the position (`line L, column C (char offset N)`): the build fails. Row-level
 * problems are dropped and counted in `readerDropped` instead. A missing capture dir or recorded file
 * throws a one-line Error naming BALLAST_CAPTURE_DIR (assertCaptureDir); so does an empty `required`
 * recorded file, while an empty optional one is skipped and listed in `skippedCaptures`.
 * With `cache` (StagedCache), a recorded file whose bytes, identity and code match a file read before,
 * and whose every capture has its parsed rows cached, is not parsed: its reader output comes from the
 * cache and each capture is handed over with the NOT_READ payload.
 */
export async function collectCaptures(
  captureDir: string,
  sink: Sink | undefined,
  asOf: number,
  take: CaptureHandler,
  cache: StagedCache | null = null,
): Promise<CaptureSet> {
  assertCaptureDir(captureDir);
  const all: CaptureInfo[] = [];
  const readerDropped: Record<string, Record<string, number>> = {};
  const readerProblems: Record<string, ReaderProblem[]> = {};
  const skippedCaptures: SkippedCapture[] = [];
  for (const rc of RECORDED_CAPTURES) {
    const read = await readRecordedFile(captureDir, rc, cache);
    if ("empty" in read) {
      skippedCaptures.push({ file: rc.file, endpoint: rc.endpoint, reason: read.empty });
      continue;
    }
    const { hash, out } = read;
    if (Object.keys(out.dropped).length) readerDropped[rc.file] = out.dropped;
    if (out.problems?.length) readerProblems[rc.file] = out.problems;
    for (const c of out.captures) {
      const info = recordedInfo(rc, c.params, hash);
      all.push(info);
      await take(info, c.payload);
    }
  }
  if (sink) all.push(...(await forEachLiveCapture(sink, take)));
  return { captures: selectAtAsOf(all, asOf), readerDropped, readerProblems, skippedCaptures };
}

/**
 * The captures a build as of `asOf` (Unix s) reads, from every capture available: snapshot endpoints
 * keep only the newest capture per params observed at or before asOf (ties: the greater path), history
 * endpoints keep all (rows after asOf are filtered at load). Sorted by endpoint, observedAt, path,
 * params. Throws an Error naming the capture path when its endpoint is unknown (pipelines/sources/endpoints.ts).
 */
export function selectAtAsOf<C extends CaptureInfo>(all: readonly C[], asOf: number): C[] {
  const selected: C[] = [];
  const newest = new Map<string, C>();
  for (const c of all) {
    const ep = ENDPOINTS[c.endpoint];
    if (!ep) throw new Error(`capture ${c.path}: unknown endpoint ${c.endpoint}`);
    if (ep.mode === "history") {
      selected.push(c);
      continue;
    }
    if (c.observedAt > asOf) continue;
    const k = `${c.endpoint}|${JSON.stringify(c.params)}`;
    const prev = newest.get(k);
    if (!prev || c.observedAt > prev.observedAt || (c.observedAt === prev.observedAt && c.path > prev.path))
      newest.set(k, c);
  }
  selected.push(...newest.values());
  selected.sort(
    (a, b) =>
      a.endpoint.localeCompare(b.endpoint) ||
      a.observedAt - b.observedAt ||
      a.path.localeCompare(b.path) ||
      JSON.stringify(a.params).localeCompare(JSON.stringify(b.params)),
  );
  return selected;
}
