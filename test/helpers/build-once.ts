import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { runBuild } from "../../build/run-build.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { buildRecordedInto, CAPTURE_DIR } from "./recorded-build.ts";

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

/** What the test file that made a shared build left for the others: its manifest, or why it failed. */
type SharedOutcome = { manifest: BuildManifest } | { error: string };

/**
 * The recorded capture (CAPTURE_DIR) built as of `asOf` (Unix s) with no warehouse (`warehousePath: null`),
 * in a fresh temp data dir of its own (name prefix `prefix`) that a test may write into. Within one run
 * of the suite each as-of is built once, by the first test file that asks for it, into the run's shared
 * dir (`sharedBuilds`, test/global-setup.ts; claimed with an atomic mkdir), and copied for every caller;
 * a file that asks while another builds waits for that build's outcome file (written last, by rename).
 * Outside that setup, a build of its own. Returns the dir and the build's manifest; throws what the build
 * throws (or, when another file's build failed, an error naming that failure).
 */
export async function buildCaptureAsOf(
  asOf: number,
  prefix = "ballast-asof-",
): Promise<{ dir: string; manifest: BuildManifest }> {
  process.env.BALLAST_LOG = "silent";
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const build = (into: string) =>
    runBuild({ asOf, captureDir: CAPTURE_DIR, sink: new FsSink(into), warehousePath: null }).then((r) => r.manifest);
  const root = inject("sharedBuilds");
  if (!root) return { dir, manifest: await build(dir) };
  const data = join(root, String(asOf));
  const outcomePath = join(root, `${asOf}.json`);
  let claimed = true;
  try {
    mkdirSync(data); // the parent exists: atomic, fails with EEXIST when another file claimed this as-of
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    claimed = false;
  }
  if (claimed) {
    let outcome: SharedOutcome;
    try {
      outcome = { manifest: await build(data) };
    } catch (err) {
      outcome = { error: String((err as Error)?.stack ?? err) };
    }
    writeFileSync(`${outcomePath}.tmp`, JSON.stringify(outcome));
    renameSync(`${outcomePath}.tmp`, outcomePath);
  }
  while (!existsSync(outcomePath)) await new Promise((r) => setTimeout(r, 100));
  const outcome = JSON.parse(readFileSync(outcomePath, "utf8")) as SharedOutcome;
  if ("error" in outcome) throw new Error(`the suite's shared build as of ${asOf} failed: ${outcome.error}`);
  cpSync(data, dir, { recursive: true });
  return { dir, manifest: outcome.manifest };
}
