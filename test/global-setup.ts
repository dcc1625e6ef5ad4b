import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import type { BuildManifest } from "../site-data/manifest.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The recorded build made once for the whole suite: its data dir (copied, never served in place) and manifest. */
    recordedBuild: { dir: string; manifest: BuildManifest };
    /**
     * An empty dir of the run where test/helpers/build-once.ts (buildCaptureAsOf) makes each other as-of's
     * build once, for every test file that asks for it; removed with the recorded build.
     */
    sharedBuilds: string;
  }
}

/**
 * Global setup of the suite: builds the recorded capture once (test/helpers/recorded-build.ts, in a child
 * process) and
 * provides its dir and manifest to every test file, which copies it (test/helpers/build-once.ts)
 * instead of building the same as-of again; provides the dir where other as-ofs are built once per run
 * (`sharedBuilds`); removes both when the run ends.
 */
export default function setup(project: TestProject) {
  const root = mkdtempSync(join(tmpdir(), "ballast-suite-build-"));
  const dir = join(root, "data");
  const manifestPath = join(root, "manifest.json");
  const helper = join(import.meta.dirname, "helpers", "recorded-build.ts");
  const run = spawnSync(process.execPath, ["--import", "tsx", helper, dir, manifestPath], { stdio: "inherit" });
  if (run.status !== 0) throw new Error(`the suite's recorded build failed (exit ${run.status ?? run.signal})`);
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as BuildManifest;
  project.provide("recordedBuild", { dir, manifest });
  const sharedBuilds = join(root, "as-of");
  mkdirSync(sharedBuilds);
  project.provide("sharedBuilds", sharedBuilds);
  return () => rmSync(root, { recursive: true, force: true });
}
