/** Object storage the build publishes to and the API reads from. Keys are `/`-separated paths. */
export interface Sink {
  put(key: string, body: Uint8Array | string): Promise<void>;
  /** Returns null when the key does not exist. */
  get(key: string): Promise<Uint8Array | null>;
  /** Keys under a prefix, sorted. */
  list(prefix: string): Promise<string[]>;
  delete(key: string): Promise<void>;
}
