import { z } from "zod";

/** Version of the manifest layout below. */
export const MANIFEST_SCHEMA_VERSION = "1.4.0";

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
 * One measured pair of daily price series (source labels, `source_a` < `source_b`) summed over the coins
 * and years they share (`source_lineage_check` in ballast.duckdb has the per-coin, per-year rows):
 * shared 00:00 UTC days, days agreeing to 1e-9, the declared families, and the verdict
 * (`undeclared-copy` when some coin-year agrees on ≥ 95% of ≥ 30 shared days while the families differ;
 * `declared-same-family` when such copies are declared one family; else `independent-by-evidence`).
 */
export const SourceLineagePairSchema = z.object({
  sourceA: z.string(),
  sourceB: z.string(),
  familyA: z.string(),
  familyB: z.string(),
  sharedDays: z.number().int(),
  equalDays: z.number().int(),
  verdict: z.enum(["undeclared-copy", "declared-same-family", "independent-by-evidence"]),
});
export type SourceLineagePair = z.infer<typeof SourceLineagePairSchema>;

/** An optional recorded capture the build skipped because it holds no data (`empty-file` or a `header-only` CSV). */
export const SkippedCaptureSchema = z.object({
  file: z.string(),
  endpoint: z.string(),
  reason: z.enum(["empty-file", "header-only"]),
});
export type SkippedCapture = z.infer<typeof SkippedCaptureSchema>;

/**
 * Manifest entry (`depegVerdicts[]`) of one recorded depeg-history verdict file (build/depeg-verdicts.ts):
 * its key, version, sha256 and provenance, the event ids this build deleted and merged by it, and the
 * rows it could not apply (`event-not-produced`: the current rules no longer produce that event, …).
 */
export const AppliedVerdictFileSchema = z.object({
  key: z.string(),
  version: z.number().int(),
  sha256: z.string(),
  recordedAt: z.number().int(),
  recordedBy: z.string(),
  requestId: z.string().nullable(),
  deleted: z.array(z.number().int()),
  merged: z.array(z.object({ into: z.number().int(), eventIds: z.array(z.number().int()) })),
  notApplied: z.array(z.object({ action: z.enum(["delete", "merge"]), eventId: z.number().int(), note: z.string() })),
});
export type AppliedVerdictFile = z.infer<typeof AppliedVerdictFileSchema>;

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
  sources: z.array(
    z.object({
      endpoint: z.string(),
      status: z.enum(["ok", "stale", "missing"]),
      rows: z.number().int(),
      dropped: z.record(z.string(), z.number()),
      newestObservedAt: z.number().nullable(),
      captures: z.array(
        z.object({
          path: z.string(),
          origin: z.string(),
          observedAt: z.number(),
          sha256: z.string(),
          rows: z.number(),
          rejected: z.string().optional(),
        }),
      ),
    }),
  ),
  readerDropped: z.record(z.string(), z.record(z.string(), z.number())),
  /** Recorded file → its first located row problems (1-based line, drop reason, parser message). */
  readerProblems: z
    .record(z.string(), z.array(z.object({ line: z.number().int(), code: z.string(), message: z.string() })))
    .default({}),
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
  /**
   * Optional recorded captures skipped because they were empty (since 1.4.0); health reports the build
   * `degraded` while any is listed. An empty required capture fails the build instead. Absent: none.
   */
  skippedCaptures: z.array(SkippedCaptureSchema).default([]),
  /** The build-time lineage check of the daily price series (since 1.4.0). Absent in older manifests. */
  sourceLineage: z.array(SourceLineagePairSchema).default([]),
  /** Recorded depeg-history verdicts this build read and what it applied of each. Absent: none recorded. */
  depegVerdicts: z.array(AppliedVerdictFileSchema).optional(),
});
export type BuildManifest = z.infer<typeof BuildManifestSchema>;

/** `latest.json`: pointer to the serving build, written last. */
export const LatestPointerSchema = z.object({ buildId: z.string(), asOf: z.number(), manifest: z.string() });

/**
 * `runs/<runId>.json`: what one build run saw, written by every run (since manifest 1.4.0), also when
 * an identical build was reused (its stored manifest stays as published, so drops new to this run would
 * otherwise be recorded nowhere) and when the run failed. `runId` is `<wall-clock stamp>-<buildId>`
 * (`<stamp>-failed` when no build was assembled); times are Unix seconds of the wall clock.
 * `manifest` is this run's own manifest (its sources, drops, quality rejections and warnings);
 * `differsFromPublished` names the manifest fields whose value differs from the published manifest
 * of a reused build ([] when equal or not reused).
 */
export const RunRecordSchema = z.object({
  runId: z.string(),
  status: z.enum(["published", "reused", "failed"]),
  asOf: z.number(),
  startedAt: z.number(),
  finishedAt: z.number(),
  buildId: z.string().nullable(),
  error: z.string().nullable(),
  differsFromPublished: z.array(z.string()),
  manifest: BuildManifestSchema.nullable(),
});
export type RunRecord = z.infer<typeof RunRecordSchema>;
