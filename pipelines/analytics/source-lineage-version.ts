/**
 * Methodology version of the build-time lineage check (pipelines/analytics/source-lineage-check.ts,
 * changelog `source-lineage-check.md`). Declared in this dependency-free module so that readers of
 * the changelog table (the API, through site-data) do not load every source client with the check
 * (about 50 MB of resident memory at server start).
 */
export const LINEAGE_CHECK_VERSION = "ballast-lineage-check-v1";
