import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runBuild } from "../../build/run-build.ts";
import { FsSink } from "../../build/sinks/fs.ts";

/** Recorded capture dir (../shared/data beside the checkout). */
export const CAPTURE_DIR = process.env.BALLAST_CAPTURE_DIR ?? resolve(import.meta.dirname, "../../../shared/data");
/** As-of of the recorded DefiLlama list. */
export const RECORDED_AS_OF = Date.parse("2025-09-07T00:00:00Z") / 1000;

/** Builds from the recorded capture into a fresh temp data dir; returns the dir, the manifest and the whole BuildResult. */
export async function buildRecorded(prefix = "ballast-test-") {
  process.env.BALLAST_LOG = "silent";
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const result = await runBuild({
    asOf: RECORDED_AS_OF,
    captureDir: CAPTURE_DIR,
    sink: new FsSink(dir),
    warehousePath: join(dir, "warehouse.duckdb"),
  });
  return { dir, manifest: result.manifest, result };
}
