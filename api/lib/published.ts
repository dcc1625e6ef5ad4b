import { type FileHandle, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { z } from "zod";
import {
  type BuildManifest,
  BuildManifestSchema,
  LatestPointerSchema,
  type ManifestFile,
} from "../../site-data/manifest.ts";
import { storedJson } from "../../site-data/snapshot.ts";
import { ByteLru } from "./byte-lru.ts";
import { HttpError } from "./http-error.ts";

/**
 * Read-only view of published storage, the one interface the API reads through (fs: `fsReader`;
 * S3: `s3Reader` in ./s3-reader.ts; chosen by `STORAGE_DRIVER`, ./storage.ts). `key` is a sink key
 * (`latest.json`, `builds/<id>/site-data/x.json`, `datasets/<topic>/<day>.csv.gz`); the answer is the
 * object's bytes, or null when it does not exist. Any other failure throws (an S3 reader throws
 * StorageUnavailableError); the store then keeps serving the build it has. `ranges`, when the store
 * can read byte ranges, returns bytes [start, end) of each range of one object (null when absent);
 * without it ServingBuild.fileRanges slices the whole object.
 */
export type ObjectReader = ((key: string) => Promise<Uint8Array | null>) & {
  ranges?: (key: string, ranges: readonly [number, number][]) => Promise<Uint8Array[] | null>;
};

/**
 * Published storage did not answer a read (an object store down, timing out or refusing access):
 * HTTP 503 `Published storage temporarily unavailable` with `Retry-After: 30` when it reaches a
 * route. `object` names what was read (`s3://bucket/key`); `reason` is a short generic cause
 * (`ECONNREFUSED`, `TimeoutError`, `HTTP 403 AccessDenied`) fit for health; `cause` is the driver's
 * error (logged by the reader, never sent to clients).
 */
export class StorageUnavailableError extends HttpError {
  constructor(
    readonly object: string,
    readonly reason: string,
    cause?: unknown,
  ) {
    super(503, "Published storage temporarily unavailable", { "Retry-After": "30" });
    this.name = "StorageUnavailableError";
    this.cause = cause;
  }
}

/** Reader over the filesystem sink layout rooted at `root` (missing file: null; other errors thrown as they are; byte ranges: positioned reads of one open file). */
export function fsReader(root: string): ObjectReader {
  const read: ObjectReader = async (key) => {
    try {
      return await readFile(join(root, key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  };
  read.ranges = async (key, ranges) => {
    let fh: FileHandle;
    try {
      fh = await open(join(root, key), "r");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
    try {
      return await Promise.all(
        ranges.map(async ([start, end]) => {
          const buf = Buffer.allocUnsafe(end - start);
          const { bytesRead } = await fh.read(buf, 0, buf.byteLength, start);
          return bytesRead === buf.byteLength ? buf : buf.subarray(0, bytesRead);
        }),
      );
    } finally {
      await fh.close();
    }
  };
  return read;
}

/** Content codings a published file may also be stored in (`<path>.br`, `<path>.gz`, written by the build). */
export type StoredEncoding = "br" | "gzip";
const SUFFIX: Record<StoredEncoding, string> = { br: ".br", gzip: ".gz" };

/** Default byte budget of one build's cache of file bytes and parsed payloads (`BUILD_CACHE_MIB`, 32 MiB). */
export const DEFAULT_BUILD_CACHE_BYTES = 32 * 1024 * 1024;
/**
 * What a parsed payload is charged in a build's cache, per byte of its file: `JSON.parse` makes about
 * 1.3-3 times the file's size of V8 heap (measured over the published payloads).
 */
export const PARSED_BYTES_PER_FILE_BYTE = 2;
/** Derived values a build keeps (`memo`), most recently used first: they are small or few per build. */
const MEMO_ENTRIES = 64;

/**
 * One published build, resolved once per request and handed to the handler, so a response never
 * mixes files of two builds. Holds the manifest, when this server first saw it (ms, for the replay
 * clock), a file index, and per-build caches, which are dropped with the build when a newer one is
 * published: file bytes and parsed payloads under one byte budget (`cacheBytes`, least recently used
 * out first; a parsed payload is charged PARSED_BYTES_PER_FILE_BYTE per byte of its file; an item
 * above the whole budget is read again when next asked for), and up to 64 derived values (`memo`).
 */
export class ServingBuild {
  readonly files: Map<string, ManifestFile>;
  /** `file:<key>` → Promise of bytes (charged their length once read); `json:<path>` → parsed payload. */
  private readonly cache: ByteLru<string, unknown>;
  private readonly memos = new ByteLru<string, Promise<unknown>>(0, MEMO_ENTRIES);

  /** @param cacheBytes byte budget of the file bytes and parsed payloads kept (default DEFAULT_BUILD_CACHE_BYTES). */
  constructor(
    readonly manifest: BuildManifest,
    readonly firstSeenMs: number,
    private readonly read: ObjectReader,
    cacheBytes = DEFAULT_BUILD_CACHE_BYTES,
  ) {
    this.files = new Map(manifest.files.map((f) => [f.path, f]));
    this.cache = new ByteLru(cacheBytes);
  }

  get id(): string {
    return this.manifest.buildId;
  }

  /** Data time (Unix s) of a published file, or null when absent or unknown. */
  dataAsOf(path: string): number | null {
    return this.files.get(path)?.dataAsOf ?? null;
  }

  /** Bytes of a file of this build (`encoding`: its stored compressed sibling), or null when absent. */
  file(path: string, encoding?: StoredEncoding): Promise<Uint8Array | null> {
    const f = this.files.get(path);
    if (!f || (encoding && !f.encodings?.includes(encoding))) return Promise.resolve(null);
    const key = `file:${encoding ? path + SUFFIX[encoding] : path}`;
    let p = this.cache.get(key) as Promise<Uint8Array | null> | undefined;
    if (!p) {
      const read = this.read(`builds/${this.id}/${key.slice(5)}`);
      p = read;
      // Single flight while the read is in flight (charged nothing), then charged its length.
      this.cache.set(key, read, 0);
      read.then(
        (bytes) => this.cache.resize(key, read, bytes?.byteLength ?? 0),
        () => this.cache.delete(key, read),
      );
    }
    return p;
  }

  /**
   * Bytes [start, end) of each range of a file of this build (uncached), or null when absent: positioned
   * reads when the reader has `ranges`, else slices of the whole file (read once, cached as by `file`).
   */
  async fileRanges(path: string, ranges: readonly [number, number][]): Promise<Uint8Array[] | null> {
    if (!this.files.has(path)) return null;
    if (this.read.ranges) return this.read.ranges(`builds/${this.id}/${path}`, ranges);
    const whole = await this.file(path);
    return whole && ranges.map(([start, end]) => whole.subarray(start, end));
  }

  /**
   * Parsed and schema-checked payload of a file, cached; `undefined` when absent. Throws
   * `PayloadInvalidError` when it is not JSON or fails the schema. `keep: false` (a caller that
   * memoises what it derives) neither keeps the payload nor reads the file into the cache.
   */
  async payload<T>(path: string, validate: (v: unknown) => T, opts: { keep?: boolean } = {}): Promise<T | undefined> {
    const key = `json:${path}`;
    if (this.cache.has(key)) return this.cache.get(key) as T;
    const keep = opts.keep !== false;
    const cached = this.cache.get(`file:${path}`) as Promise<Uint8Array | null> | undefined;
    const bytes = await (keep || cached || !this.files.has(path)
      ? this.file(path)
      : this.read(`builds/${this.id}/${path}`));
    if (!bytes) return undefined;
    let value: T;
    try {
      value = validate(JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")));
    } catch {
      throw new PayloadInvalidError(path);
    }
    if (keep) this.cache.set(key, value, bytes.byteLength * PARSED_BYTES_PER_FILE_BYTE);
    return value;
  }

  /** A value derived from this build, computed once (a rejected computation is not kept). */
  memo<T>(key: string, compute: () => Promise<T> | T): Promise<T> {
    let p = this.memos.get(key) as Promise<T> | undefined;
    if (!p) {
      const computed = Promise.resolve().then(compute);
      p = computed;
      this.memos.set(key, computed, 0);
      computed.catch(() => this.memos.delete(key, computed));
    }
    return p;
  }

  /** Bytes charged and entries of the file and payload cache (tests, diagnostics). */
  cacheStats(): { bytes: number; entries: number } {
    return this.cache.stats();
  }
}

/** Options of `PublishedStore` beyond the reader, refresh interval and clock. */
export interface PublishedStoreOptions {
  /**
   * Longest wait (ms) of a request for a due re-check of `latest.json` once a build is serving; past
   * it the request is served from the build it has and the re-check finishes in the background.
   * Default unbounded (a local filesystem answers at once); the server bounds it on object storage.
   */
  maxRefreshWaitMs?: number;
  /** Byte budget of each serving build's cache of file bytes and parsed payloads (default DEFAULT_BUILD_CACHE_BYTES). */
  buildCacheBytes?: number;
}

/** Why published storage could not be read at the last re-check: since when (Unix ms) and the error (generic, no credentials). */
export interface StorageFailure {
  sinceMs: number;
  error: string;
}

/**
 * Follows `latest.json` (re-read at most once per `refreshMs`). A missing or invalid pointer or
 * manifest keeps the previous build serving (null before the first valid one: routes answer 503),
 * and so does storage that fails to answer (recorded for health: `storageFailure()`). Several
 * instances reading one bucket switch to a new build within `refreshMs` (+ the read) of its pointer
 * landing.
 */
export class PublishedStore {
  private latest: ServingBuild | null = null;
  private checkedAt = -Infinity;
  private refreshing: Promise<ServingBuild | null> | null = null;
  private failure: StorageFailure | null = null;

  constructor(
    private readonly read: ObjectReader,
    private readonly refreshMs = 1000,
    private readonly nowMs: () => number = Date.now,
    private readonly opts: PublishedStoreOptions = {},
  ) {}

  /**
   * The serving build without waiting, or null when it is due for a re-check (or none is published).
   * A due re-check is started here (the caller then goes the waiting way, `build()`), so a process
   * answered only through `current()` still follows the pointer within `refreshMs` plus one read.
   */
  current(): ServingBuild | null {
    if (this.nowMs() - this.checkedAt < this.refreshMs) return this.latest;
    void this.recheck();
    return null;
  }

  /** The re-check of `latest.json` in flight, started when none is. */
  private recheck(): Promise<ServingBuild | null> {
    this.refreshing ??= this.refresh().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /**
   * The serving build; callers resolve it once per request and pass it on. While no build has been
   * read yet, a caller waits for the read in flight (a request racing the first read must not see
   * "no published build"); afterwards the previous build serves during a re-check.
   */
  build(): Promise<ServingBuild | null> {
    if (this.refreshing && !this.latest) return this.refreshing;
    if (this.nowMs() - this.checkedAt < this.refreshMs) return Promise.resolve(this.latest);
    const refreshing = this.recheck();
    const wait = this.opts.maxRefreshWaitMs;
    if (wait === undefined || !this.latest) return refreshing;
    const previous = this.latest;
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      refreshing.finally(() => clearTimeout(timer)),
      new Promise<ServingBuild>((resolve) => {
        timer = setTimeout(() => resolve(previous), wait);
      }),
    ]);
  }

  /** Published storage's failure at the last re-check of `latest.json`, or null when it answered (a missing pointer counts as answered). */
  storageFailure(): StorageFailure | null {
    return this.failure;
  }

  private async refresh(): Promise<ServingBuild | null> {
    this.checkedAt = this.nowMs();
    let raw: Uint8Array | null;
    try {
      raw = await this.read("latest.json");
      this.failure = null;
    } catch (err) {
      this.failure ??= {
        sinceMs: this.nowMs(),
        error:
          err instanceof StorageUnavailableError ? `${err.object}: ${err.reason}` : "latest.json could not be read",
      };
      return this.latest;
    }
    if (!raw) return this.latest;
    let what = "latest.json";
    try {
      const pointer = LatestPointerSchema.parse(JSON.parse(Buffer.from(raw).toString("utf8")));
      if (this.latest?.id !== pointer.buildId) {
        what = pointer.manifest;
        const m = await this.read(pointer.manifest);
        if (!m) throw new Error("missing");
        const manifest = BuildManifestSchema.parse(JSON.parse(Buffer.from(m).toString("utf8")));
        this.latest = new ServingBuild(manifest, this.nowMs(), this.read, this.opts.buildCacheBytes);
      }
      this.unreadablePointer = null;
    } catch (err) {
      // keep serving the previous build when the pointer or manifest is unreadable (reported by health)
      const error = `${what} ${err instanceof Error && err.message === "missing" ? "is missing" : "is unreadable"}`;
      if (this.unreadablePointer?.error !== error) this.unreadablePointer = { sinceMs: this.nowMs(), error };
    }
    return this.latest;
  }

  private unreadablePointer: StorageFailure | null = null;

  /**
   * The published pointer as of the last re-check when it could not be followed: `latest.json` not
   * JSON or failing its schema, or the manifest it names missing or invalid; since when (Unix ms) and
   * which (`latest.json is unreadable`, `builds/<id>/manifest.json is missing`). Null when it was followed,
   * or no pointer is stored. The previous build keeps serving meanwhile.
   */
  pointerFailure(): StorageFailure | null {
    return this.unreadablePointer;
  }

  /** Raw object outside builds (dated datasets and their compressed siblings). */
  object(key: string): Promise<Uint8Array | null> {
    return this.read(key);
  }

  /**
   * A stored JSON object outside builds (a dated snapshot or digest, an index) with its value checked
   * against `schema`: null when absent. The outcome is recorded for health (checked).
   * @throws HttpError 500 `corrupt` when the bytes are not JSON or fail the schema (never a partial body).
   */
  async storedPayload<T>(
    key: string,
    schema: z.ZodType<T>,
    corrupt: string,
  ): Promise<{ bytes: Uint8Array; value: T } | null> {
    const bytes = await this.read(key);
    if (!bytes) return null;
    const value = storedJson(bytes, schema);
    this.checked(key, value !== null);
    if (value === null) throw new HttpError(500, corrupt);
    return { bytes, value };
  }

  private readonly corrupt = new Map<string, number>();

  /**
   * Records the outcome of checking a stored object outside builds (a dated snapshot or digest, an
   * index) against its schema: a failure is kept (with the time first seen, Unix ms) until a later
   * read of the same key passes. Health lists the failing keys (corruptObjects).
   */
  checked(key: string, valid: boolean): void {
    if (valid) this.corrupt.delete(key);
    else if (!this.corrupt.has(key)) this.corrupt.set(key, this.nowMs());
  }

  /** Stored objects whose last read failed their schema, by key, with the time first seen (Unix ms), oldest first. */
  corruptObjects(): { key: string; sinceMs: number }[] {
    return [...this.corrupt.entries()].map(([key, sinceMs]) => ({ key, sinceMs }));
  }
}

/** A published payload failed its contract at read time. */
export class PayloadInvalidError extends Error {
  constructor(readonly path: string) {
    super(`published payload ${path} failed its schema`);
  }
}
