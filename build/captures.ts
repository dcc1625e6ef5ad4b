import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { ENDPOINTS } from "../pipelines/sources/endpoints.ts";
import { RECORDED_CAPTURES } from "../pipelines/sources/recorded-captures.ts";
import type { Capture } from "../pipelines/sources/types.ts";
import type { Sink } from "./sinks/sink.ts";

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
  readerDropped: Record<string, Record<string, number>>;
}

/**
 * Every capture available at `asOf` (Unix s): recorded files from the capture dir and live raw
 * captures in the sink. Snapshot endpoints keep only the newest capture per params observed at or
 * before asOf; history endpoints keep all captures (rows after asOf are filtered at load).
 */
export async function collectCaptures(captureDir: string, sink: Sink, asOf: number): Promise<CaptureSet> {
  const all: Capture[] = [];
  const readerDropped: Record<string, Record<string, number>> = {};
  for (const rc of RECORDED_CAPTURES) {
    const bytes = await readFile(join(captureDir, rc.file));
    const hash = sha256(bytes);
    const out = rc.read(bytes.toString("utf8"));
    if (Object.keys(out.dropped).length) readerDropped[rc.file] = out.dropped;
    for (const c of out.captures) {
      all.push({ endpoint: rc.endpoint, params: { ...rc.params, ...c.params }, observedAt: rc.observedAt, origin: "recorded", path: rc.file, sha256: hash, payload: c.payload });
    }
  }
  for (const key of await sink.list("raw/")) {
    if (!/\.json(\.gz)?$/.test(key)) continue;
    const bytes = (await sink.get(key))!;
    const text = key.endsWith(".gz") ? gunzipSync(bytes).toString("utf8") : Buffer.from(bytes).toString("utf8");
    const f = JSON.parse(text) as RawCaptureFile;
    all.push({ endpoint: f.endpoint, params: f.params, observedAt: f.observedAt, origin: "live", path: key, sha256: sha256(bytes), payload: f.payload });
  }
  const selected: Capture[] = [];
  const newest = new Map<string, Capture>();
  for (const c of all) {
    const ep = ENDPOINTS[c.endpoint];
    if (!ep) throw new Error(`capture ${c.path}: unknown endpoint ${c.endpoint}`);
    if (ep.mode === "history") { selected.push(c); continue; }
    if (c.observedAt > asOf) continue;
    const k = `${c.endpoint}|${JSON.stringify(c.params)}`;
    const prev = newest.get(k);
    if (!prev || c.observedAt > prev.observedAt || (c.observedAt === prev.observedAt && c.path > prev.path)) newest.set(k, c);
  }
  selected.push(...newest.values());
  selected.sort((a, b) => a.endpoint.localeCompare(b.endpoint) || a.observedAt - b.observedAt || a.path.localeCompare(b.path) || JSON.stringify(a.params).localeCompare(JSON.stringify(b.params)));
  return { captures: selected, readerDropped };
}
