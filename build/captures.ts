import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { ENDPOINTS } from "../pipelines/sources/endpoints.ts";
import { parseJsonText } from "../pipelines/sources/file-formats.ts";
import { RECORDED_CAPTURES } from "../pipelines/sources/recorded-captures.ts";
import type { Capture, ReaderProblem } from "../pipelines/sources/types.ts";
import type { SkippedCapture } from "../site-data/manifest.ts";
import type { Sink } from "./sinks/sink.ts";
import { must } from "../api/lib/must.ts";

/** Raw capture file written by `capture`: `raw/<source>/<YYYY-MM-DD>/<capture-id>.json[.gz]`. */
export interface RawCaptureFile {
  endpoint: string;
  params: Record<string, string>;
  observedAt: number;
  payload: unknown;
}

export const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest("hex");

/** Captures plus reader-level drop counts (e.g. unmapped rows of a recorded file). */
export interface CaptureSet {
  captures: Capture[];
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
 * params, observation time and payload, origin `live`; other keys under `raw/` (`raw/_circuits.json`) are
 * skipped. Unreadable files throw naming the key.
 */
export async function readLiveCaptures(sink: Sink): Promise<Capture[]> {
  const out: Capture[] = [];
  for (const key of await sink.list("raw/")) {
    // Only capture files: `raw/_circuits.json` (circuit states of the last capture run) is not one.
    if (!RAW_CAPTURE_KEY.test(key)) continue;
    const stored = await sink.get(key);
    const bytes = readOrThrow(key, "raw capture", () => must(stored, "listed object"));
    const f = readOrThrow(key, "raw capture", () => {
      const text = key.endsWith(".gz") ? gunzipSync(bytes).toString("utf8") : Buffer.from(bytes).toString("utf8");
      return parseJsonText(text) as RawCaptureFile;
    });
    out.push({
      endpoint: f.endpoint,
      params: f.params,
      observedAt: f.observedAt,
      origin: "live",
      path: key,
      sha256: sha256(bytes),
      payload: f.payload,
    });
  }
  return out;
}

/**
 * Every capture available at `asOf` (Unix s): recorded files from the capture dir and live raw
 * captures in the sink (none without a sink). Snapshot endpoints keep only the newest capture per
 * params observed at or before asOf; history endpoints keep all captures (rows after asOf are filtered at load).
 * A file that cannot be read at all (e.g. truncated JSON) throws an Error whose message names the
 * file path and the position (`line L, column C (char offset N)`): the build fails. Row-level
 * problems are dropped and counted in `readerDropped` instead. A missing capture dir or recorded file
 * throws a one-line Error naming BALLAST_CAPTURE_DIR (assertCaptureDir); so does an empty `required`
 * recorded file, while an empty optional one is skipped and listed in `skippedCaptures`.
 */
export async function collectCaptures(captureDir: string, sink: Sink | undefined, asOf: number): Promise<CaptureSet> {
  assertCaptureDir(captureDir);
  const all: Capture[] = [];
  const readerDropped: Record<string, Record<string, number>> = {};
  const readerProblems: Record<string, ReaderProblem[]> = {};
  const skippedCaptures: SkippedCapture[] = [];
  for (const rc of RECORDED_CAPTURES) {
    const fullPath = join(captureDir, rc.file);
    const bytes = await readRecorded(captureDir, rc.file);
    const hash = sha256(bytes);
    const text = bytes.toString("utf8");
    const empty = emptinessOf(rc.file, text);
    if (empty && rc.required) {
      throw new Error(
        `recorded capture ${rc.file} (${rc.endpoint}) is empty (${empty}) in capture directory ${captureDir} (BALLAST_CAPTURE_DIR): it is a required input, so the build stops as for a missing file`,
      );
    }
    if (empty) {
      skippedCaptures.push({ file: rc.file, endpoint: rc.endpoint, reason: empty });
      continue;
    }
    const out = readOrThrow(fullPath, `recorded capture (${rc.endpoint})`, () => rc.read(text));
    if (Object.keys(out.dropped).length) readerDropped[rc.file] = out.dropped;
    if (out.problems?.length) readerProblems[rc.file] = out.problems;
    for (const c of out.captures) {
      all.push({
        endpoint: rc.endpoint,
        params: { ...rc.params, ...c.params },
        observedAt: rc.observedAt,
        origin: "recorded",
        path: rc.file,
        sha256: hash,
        payload: c.payload,
      });
    }
  }
  if (sink) all.push(...(await readLiveCaptures(sink)));
  return { captures: selectAtAsOf(all, asOf), readerDropped, readerProblems, skippedCaptures };
}

/**
 * The captures a build as of `asOf` (Unix s) reads, from every capture available: snapshot endpoints
 * keep only the newest capture per params observed at or before asOf (ties: the greater path), history
 * endpoints keep all (rows after asOf are filtered at load). Sorted by endpoint, observedAt, path,
 * params. Throws an Error naming the capture path when its endpoint is unknown (pipelines/sources/endpoints.ts).
 */
export function selectAtAsOf(all: readonly Capture[], asOf: number): Capture[] {
  const selected: Capture[] = [];
  const newest = new Map<string, Capture>();
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
