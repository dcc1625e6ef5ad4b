import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { buildRecordedInto } from "./recorded-build.ts";

export { CAPTURE_DIR, RECORDED_AS_OF } from "./recorded-build.ts";

/**
 * The recorded build in a fresh temp data dir of its own (name prefix `prefix`): a copy of the one
 * the suite's global setup built once (test/global-setup.ts), so a test may write into its dir; with
 * `fresh: true` (or outside that setup) a build of its own, for tests about building itself (reproducibility).
 * Returns the dir and the build's manifest.
 */
export async function buildRecorded(
  prefix = "ballast-test-",
  opts: { fresh?: boolean } = {},
): Promise<{ dir: string; manifest: BuildManifest }> {
  process.env.BALLAST_LOG = "silent";
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const shared = opts.fresh ? undefined : inject("recordedBuild");
  if (!shared) return { dir, manifest: await buildRecordedInto(dir) };
  cpSync(shared.dir, dir, { recursive: true });
  return { dir, manifest: shared.manifest };
}
