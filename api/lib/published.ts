import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type BuildManifest, BuildManifestSchema, LatestPointerSchema, type ManifestFile } from "../../site-data/manifest.ts";

/** Read-only view of published storage: `get(key)` → bytes or null. */
export type ObjectReader = (key: string) => Promise<Uint8Array | null>;

/** Reader over the filesystem sink layout rooted at `root`. */
export function fsReader(root: string): ObjectReader {
  return async (key) => {
    try {
      return await readFile(join(root, key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  };
}

/** The serving build: its manifest, when the server first saw it (ms), and a file index. */
export interface ServingBuild {
  manifest: BuildManifest;
  firstSeenMs: number;
  files: Map<string, ManifestFile>;
}

/**
 * Follows `latest.json` (re-read at most once per `refreshMs`) and caches file bytes and parsed
 * payloads per build. A missing or invalid pointer/manifest yields null (routes answer 503).
 */
export class PublishedStore {
  private current: ServingBuild | null = null;
  private checkedAt = 0;
  private readonly bytes = new Map<string, Uint8Array | null>();
  private readonly parsed = new Map<string, unknown>();
  private readonly memos = new Map<string, unknown>();

  constructor(private readonly read: ObjectReader, private readonly refreshMs = 1000, private readonly nowMs: () => number = Date.now) {}

  async build(): Promise<ServingBuild | null> {
    if (this.nowMs() - this.checkedAt < this.refreshMs && this.current) return this.current;
    this.checkedAt = this.nowMs();
    try {
      const raw = await this.read("latest.json");
      if (!raw) return this.current;
      const pointer = LatestPointerSchema.parse(JSON.parse(Buffer.from(raw).toString("utf8")));
      if (this.current?.manifest.buildId === pointer.buildId) return this.current;
      const m = await this.read(pointer.manifest);
      if (!m) return this.current;
      const manifest = BuildManifestSchema.parse(JSON.parse(Buffer.from(m).toString("utf8")));
      this.current = { manifest, firstSeenMs: this.nowMs(), files: new Map(manifest.files.map((f) => [f.path, f])) };
      this.bytes.clear();
      this.parsed.clear();
      this.memos.clear();
    } catch {
      // keep serving the previous build when the pointer or manifest is unreadable
    }
    return this.current;
  }

  /** Bytes of a file of the serving build, or null when absent. */
  async file(path: string): Promise<Uint8Array | null> {
    const b = await this.build();
    if (!b || !b.files.has(path)) return null;
    const key = `${b.manifest.buildId}/${path}`;
    if (!this.bytes.has(key)) this.bytes.set(key, await this.read(`builds/${b.manifest.buildId}/${path}`));
    return this.bytes.get(key)!;
  }

  /**
   * Parsed and schema-checked payload of a file, cached per build; `undefined` when absent,
   * throws `PayloadInvalidError` when it fails the schema or is not JSON.
   */
  async payload<T>(path: string, validate: (v: unknown) => T): Promise<T | undefined> {
    const b = await this.build();
    const key = `${b?.manifest.buildId}/${path}`;
    if (this.parsed.has(key)) return this.parsed.get(key) as T;
    const bytes = await this.file(path);
    if (!bytes) return undefined;
    let value: T;
    try {
      value = validate(JSON.parse(Buffer.from(bytes).toString("utf8")));
    } catch {
      throw new PayloadInvalidError(path);
    }
    this.parsed.set(key, value);
    return value;
  }

  /**
   * Value derived from the serving build, computed once per build (e.g. serialised responses).
   * `compute` may throw; nothing is cached then.
   */
  async memo<T>(key: string, compute: () => Promise<T> | T): Promise<T> {
    const b = await this.build();
    const k = `${b?.manifest.buildId}/${key}`;
    if (this.memos.has(k)) return this.memos.get(k) as T;
    const v = await compute();
    this.memos.set(k, v);
    return v;
  }

  /** Raw object outside builds (dated datasets). */
  async object(key: string): Promise<Uint8Array | null> {
    return this.read(key);
  }
}

/** A published payload failed its contract at read time. */
export class PayloadInvalidError extends Error {
  constructor(readonly path: string) {
    super(`published payload ${path} failed its schema`);
  }
}
