import type { BuildManifest } from "../../site-data/manifest.ts";

/**
 * A manifest `files` entry for the JSON cache `site-data/<artifact>.json`: one row, placeholder hash and
 * size, schema 1.0.0, refreshed at `dataAsOf` (unix seconds, null when the data has no time) with a
 * freshness budget of `maxAgeSec` seconds.
 */
export const manifestFile = (
  artifact: string,
  maxAgeSec: number,
  dataAsOf: number | null,
): BuildManifest["files"][number] => ({
  path: `site-data/${artifact}.json`,
  sha256: "0",
  bytes: 1,
  rows: 1,
  dataAsOf,
  schemaVersion: "1.0.0",
  artifact,
  maxAgeSec,
});

/**
 * The manifest records of a clean build, all empty (a fresh object per call, so a test may change
 * it): no reader drops or problems, no circuits, models, quality rejections, warnings, skipped
 * captures or lineage checks.
 */
export const cleanManifestRecords = (): Pick<
  BuildManifest,
  | "readerDropped"
  | "readerProblems"
  | "circuits"
  | "models"
  | "qualityRejections"
  | "warnings"
  | "skippedCaptures"
  | "sourceLineage"
> => ({
  readerDropped: {},
  readerProblems: {},
  circuits: {},
  models: [],
  qualityRejections: {},
  warnings: [],
  skippedCaptures: [],
  sourceLineage: [],
});
