import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CaptureInfo, ReaderProblem } from "../pipelines/sources/types.ts";
import { codeFingerprint } from "./fingerprint.ts";

/** What the load stage kept of one capture besides its rows: the parser's drop counts, or why the whole capture was rejected. */
export interface StagedMeta {
  dropped: Record<string, number>;
  rejected?: { reason: "payload-rejected" | "parse-failed"; message: string };
}

/** One cache entry: the staged rows (Parquet, before the as-of filter; absent for a rejected capture) and the meta. */
export interface StagedEntry {
  parquet: string | null;
  meta: StagedMeta;
}

/**
 * Payload stand-in the capture source hands to the load stage for a capture whose parsed rows are
 * cached, so the recorded file is not parsed at all; RawLoader throws if it ever has to read it.
 */
export const NOT_READ: unique symbol = Symbol("payload not read: its parsed rows are cached");

/** What a reader made of one recorded file, without payloads: each capture's params, the reader's drops and problems. */
export interface ReadFileEntry {
  captures: { params: Record<string, string> }[];
  dropped: Record<string, number>;
  problems?: ReaderProblem[];
}

/** Folder of the cache under the build's scratch dir (BALLAST_SCRATCH_DIR, default `<BALLAST_DATA_DIR>/scratch` in the CLI; the OS temp dir for an in-process build given none). */
export const STAGED_CACHE_FOLDER = "ballast-staged-captures";

/** Entries not used for this long are removed after a load (a new code fingerprint leaves old entries unused). */
export const STAGED_CACHE_MAX_IDLE_SEC = 7 * 86_400;

/**
 * Cache of parsed captures for the load stage (RawLoader), in a local folder: a capture whose file
 * bytes (`sha256`), identity (endpoint, path, origin, params, observedAt) and code (codeFingerprint:
 * every parser, schema and package version) are unchanged is not validated and parsed again; its
 * staged rows are read back from the Parquet file the first parse wrote (every row the parser kept,
 * before the as-of filter, which the loader applies after). A scheduled build over unchanged archives
 * therefore parses only its new captures. Only captures with a real content hash are cached (64 hex
 * digits: recorded files and live raw captures). Entries are written atomically (temp file + rename),
 * touched on use and removed after STAGED_CACHE_MAX_IDLE_SEC unused (`prune`).
 */
export class StagedCache {
  private readonly code = codeFingerprint();

  constructor(readonly dir: string) {}

  /** The entry key of `info`, or null when the capture is not cacheable (no content hash). */
  keyOf(info: CaptureInfo): string | null {
    if (!/^[0-9a-f]{64}$/.test(info.sha256)) return null;
    const params = Object.keys(info.params)
      .sort()
      .map((k) => [k, info.params[k]]);
    return createHash("sha256")
      .update(JSON.stringify([this.code, info.endpoint, info.path, info.origin, info.observedAt, params, info.sha256]))
      .digest("hex");
  }

  /**
   * The key of a recorded file's reader output: its bytes (`sha256`), identity (endpoint, file, params,
   * observedAt) and the code fingerprint.
   */
  fileKeyOf(
    file: { endpoint: string; file: string; params?: Record<string, string>; observedAt: number },
    sha256: string,
  ): string {
    const params = Object.entries(file.params ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
    return createHash("sha256")
      .update(JSON.stringify([this.code, "file", file.endpoint, file.file, file.observedAt, params, sha256]))
      .digest("hex");
  }

  /** The reader output stored under `key`, touched, or null when there is none. */
  getFile(key: string): ReadFileEntry | null {
    const file = join(this.dir, `${key}.json`);
    if (!existsSync(file)) return null;
    const now = new Date();
    utimesSync(file, now, now);
    return JSON.parse(readFileSync(file, "utf8")) as ReadFileEntry;
  }

  /** Stores a reader output under `key` (temp file + rename). */
  async putFile(key: string, entry: ReadFileEntry): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    const tmp = join(this.dir, `.${key}.${process.pid}.${Date.now()}.json`);
    await writeFile(tmp, JSON.stringify(entry));
    renameSync(tmp, join(this.dir, `${key}.json`));
  }

  /** True when the parsed rows of `info` are cached (`get` would return its entry). */
  has(info: CaptureInfo): boolean {
    const key = this.keyOf(info);
    if (!key || !existsSync(join(this.dir, `${key}.json`))) return false;
    const meta = JSON.parse(readFileSync(join(this.dir, `${key}.json`), "utf8")) as StagedMeta;
    return Boolean(meta.rejected) || existsSync(join(this.dir, `${key}.parquet`));
  }

  /** The entry of `key`, touched (its idle time restarts), or null when there is none. */
  get(key: string): StagedEntry | null {
    const metaFile = join(this.dir, `${key}.json`);
    if (!existsSync(metaFile)) return null;
    const meta = JSON.parse(readFileSync(metaFile, "utf8")) as StagedMeta;
    const parquet = join(this.dir, `${key}.parquet`);
    if (!meta.rejected && !existsSync(parquet)) return null;
    const now = new Date();
    utimesSync(metaFile, now, now);
    return { parquet: meta.rejected ? null : parquet, meta };
  }

  /**
   * Stores an entry: `writeParquet(tempPath)` writes the rows (skipped for a rejected capture), then the
   * Parquet file and the meta are renamed into place, the meta last (an entry without its meta is not read).
   */
  async put(key: string, meta: StagedMeta, writeParquet: (file: string) => Promise<void>): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    const tmp = `.${key}.${process.pid}.${Date.now()}`;
    if (!meta.rejected) {
      await writeParquet(join(this.dir, `${tmp}.parquet`));
      renameSync(join(this.dir, `${tmp}.parquet`), join(this.dir, `${key}.parquet`));
    }
    const metaTmp = join(this.dir, `${tmp}.json`);
    await writeFile(metaTmp, JSON.stringify(meta));
    renameSync(metaTmp, join(this.dir, `${key}.json`));
  }

  /** Removes entries (and leftover temp files) unused for more than STAGED_CACHE_MAX_IDLE_SEC; returns how many files went. */
  prune(nowMs = Date.now()): number {
    return pruneIdleEntries(this.dir, ".json", nowMs);
  }
}

/**
 * Removes from the cache folder `dir` every entry not used for more than STAGED_CACHE_MAX_IDLE_SEC
 * before `nowMs` (Unix ms), shared by the caches kept under the scratch dir (this one, build/og/cache.ts).
 * An entry is the files `<key>.<ext>` of one key (no dot in the key); its `<key><marker>` file (e.g.
 * `.json`) is the one touched on use, so its modification time is the entry's last use: when it is
 * idle, every file of the key goes. Temp files (names starting with `.`) left idle by a killed writer
 * go too. A missing `dir` has nothing. Returns how many files were removed.
 */
export function pruneIdleEntries(dir: string, marker: string, nowMs = Date.now()): number {
  if (!existsSync(dir)) return 0;
  const names = readdirSync(dir);
  const idle = (f: string) => {
    try {
      return nowMs - statSync(join(dir, f)).mtimeMs > STAGED_CACHE_MAX_IDLE_SEC * 1000;
    } catch {
      return false; // removed meanwhile (another build pruning or renaming)
    }
  };
  const stale = new Set(
    names.filter((f) => f.endsWith(marker) && !f.startsWith(".") && idle(f)).map((f) => f.slice(0, -marker.length)),
  );
  let removed = 0;
  for (const f of names) {
    const key = f.split(".")[0];
    if ((!f.startsWith(".") && stale.has(key)) || (f.startsWith(".") && idle(f))) {
      rmSync(join(dir, f), { force: true });
      removed++;
    }
  }
  return removed;
}
