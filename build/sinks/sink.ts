/** Object storage the build publishes to and the API reads from. Keys are `/`-separated paths. */
export interface Sink {
  put(key: string, body: Uint8Array | string): Promise<void>;
  /** Returns null when the key does not exist. */
  get(key: string): Promise<Uint8Array | null>;
  /** Keys under a prefix, sorted (never temporary objects of an unfinished put). */
  list(prefix: string): Promise<string[]>;
  delete(key: string): Promise<void>;
}

/** A sink the publish stage can also sweep and prune: folder listing, recursive delete, leftovers of killed writers. */
export interface PublishSink extends Sink {
  /** Names of the immediate sub-folders of `prefix` (which ends with `/`), sorted: `builds/` → build ids. */
  listDirs(prefix: string): Promise<string[]>;
  /**
   * Keys of temporary objects a killed writer left behind, sorted, not looking inside `skipFolders`
   * (keys ending with `/`): the fs sink's `<key>.<pid>.<rand>.tmp` files whose writing process no
   * longer runs. Always empty for S3 (a put is atomic there).
   */
  listAbandoned(skipFolders?: readonly string[]): Promise<string[]>;
  /** Deletes every object under `prefix` (which must end with `/`; throws otherwise). */
  deletePrefix(prefix: string): Promise<void>;
  /** Where a key lives, for messages: an absolute file path (fs) or `s3://<bucket>/<key>`. */
  describe(key: string): string;
}

/** Throws unless `prefix` names a folder (non-empty, ends with `/`, no `..` or empty segment): guards recursive deletes. */
export function assertFolderPrefix(prefix: string): void {
  if (
    !prefix.endsWith("/") ||
    prefix === "/" ||
    prefix.split("/").some((p, i, a) => p === ".." || (p === "" && i < a.length - 1))
  ) {
    throw new Error(`deletePrefix: ${JSON.stringify(prefix)} is not a folder prefix like "builds/<id>/"`);
  }
}
