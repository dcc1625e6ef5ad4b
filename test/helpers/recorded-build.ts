import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { runBuild } from "../../build/run-build.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";

/** Recorded capture dir (../shared/data beside the checkout). */
export const CAPTURE_DIR = process.env.BALLAST_CAPTURE_DIR ?? resolve(import.meta.dirname, "../../../shared/data");
/** As-of of the recorded DefiLlama list. */
export const RECORDED_AS_OF = Date.parse("2025-09-07T00:00:00Z") / 1000;

/**
 * Builds the recorded capture as of RECORDED_AS_OF into data dir `dir` (fs sink, warehouse
 * `dir/warehouse.duckdb`), logging nothing; returns the build's manifest. No vitest import, so the
 * suite's global setup (test/global-setup.ts) can run it once for every test file.
 */
export async function buildRecordedInto(dir: string): Promise<BuildManifest> {
  process.env.BALLAST_LOG = "silent";
  const result = await runBuild({
    asOf: RECORDED_AS_OF,
    captureDir: CAPTURE_DIR,
    sink: new FsSink(dir),
    warehousePath: resolve(dir, "warehouse.duckdb"),
  });
  return result.manifest;
}

// `node --import tsx test/helpers/recorded-build.ts <dir> <manifest.json>`: the global setup's build, in a
// process of its own (vitest's module runner cannot load the build's tsx-resolving worker modules).
if (process.argv[1] === import.meta.filename) {
  const [dir, manifestPath] = process.argv.slice(2);
  writeFileSync(manifestPath, JSON.stringify(await buildRecordedInto(dir)));
}
