import { z } from "zod";

/** Version of the manifest layout below. */
export const MANIFEST_SCHEMA_VERSION = "1.3.0";

/** A precompressed sibling the build stores next to a file: `br` → `<key>.br`, `gzip` → `<key>.gz`. */
export const StoredEncodingSchema = z.enum(["br", "gzip"]);
export type StoredEncoding = z.infer<typeof StoredEncodingSchema>;

/**
 * One published file of a build. `dataAsOf` and times are Unix seconds; `sha256` and `bytes` are of the
 * uncompressed file.
 */
export const ManifestFileSchema = z.object({
  path: z.string(),
  sha256: z.string(),
  bytes: z.number().int(),
  rows: z.number().int().nullable(),
  dataAsOf: z.number().nullable(),
  schemaVersion: z.string(),
  artifact: z.string(),
  /** Freshness budget of the serving route (s), for site-data artifacts. */
  maxAgeSec: z.number().optional(),
  /**
   * Precompressed siblings stored next to the file (since 1.3.0), same bytes once decoded:
   * `builds/<id>/<path>.br` (brotli) and `builds/<id>/<path>.gz` (gzip); for a dated dataset file also
   * `datasets/<topic>/<YYYY-MM-DD>.<fmt>.br` / `.gz` beside its dated copy. Absent: no siblings.
   */
  encodings: z.array(StoredEncodingSchema).optional(),
});
export type ManifestFile = z.infer<typeof ManifestFileSchema>;

export const CircuitStateSchema = z.object({
  state: z.enum(["closed", "open", "half-open"]),
  consecutiveFailures: z.number().int(),
  lastSuccessAt: z.number().nullable(),
});

/**
 * `builds/<build-id>/manifest.json`: every file with sha256/bytes/rows/dataAsOf, every source with
 * its captures, status and counted drop reasons, circuit states and model row counts.
 */
export const BuildManifestSchema = z.object({
  schemaVersion: z.string(),
  buildId: z.string(),
  asOf: z.number(),
  generatedAt: z.number(),
  /** `replay`: built from recorded captures (the API runs a replay clock); `wall`: live. */
  clock: z.enum(["replay", "wall"]),
  /**
   * sha256 of the `<path>:<sha256>` lines of every listed file with reproducible bytes (all but
   * `ballast.duckdb`); its first 7 hex digits end the build id. Compressed siblings are not listed.
   */
  contentHash: z.string(),
  files: z.array(ManifestFileSchema),
  sources: z.array(z.object({
    endpoint: z.string(),
    status: z.enum(["ok", "stale", "missing"]),
    rows: z.number().int(),
    dropped: z.record(z.string(), z.number()),
    newestObservedAt: z.number().nullable(),
    captures: z.array(z.object({
      path: z.string(), origin: z.string(), observedAt: z.number(), sha256: z.string(), rows: z.number(), rejected: z.string().optional(),
    })),
  })),
  readerDropped: z.record(z.string(), z.record(z.string(), z.number())),
  /** Recorded file → its first located row problems (1-based line, drop reason, parser message). */
  readerProblems: z.record(z.string(), z.array(z.object({ line: z.number().int(), code: z.string(), message: z.string() }))).default({}),
  circuits: z.record(z.string(), CircuitStateSchema),
  models: z.array(z.object({ name: z.string(), rows: z.number() })),
  /**
   * Input rows refused by a quality rule, per producer and reason: analytics (e.g. non-positive or spike
   * prices) and `supply_value_rejections` (implausible supply values: `above-10t-usd`, `over-100x-previous-day`).
   */
  qualityRejections: z.record(z.string(), z.record(z.string(), z.number())),
  /**
   * Things a reader of this build should know that did not stop publication (since 1.2.0), e.g. an
   * upstream coin published with a provisional `unreviewed` registry record, or no list capture at
   * as-of (current supply from history). Absent in older manifests (read as []).
   */
  warnings: z.array(z.string()).default([]),
});
export type BuildManifest = z.infer<typeof BuildManifestSchema>;

/** `latest.json`: pointer to the serving build, written last. */
export const LatestPointerSchema = z.object({ buildId: z.string(), asOf: z.number(), manifest: z.string() });
