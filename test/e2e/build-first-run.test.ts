import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

describe("first run without the recorded data", () => {
  it("fails the build with one line naming BALLAST_CAPTURE_DIR and ../shared, publishing nothing", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ballast-first-run-"));
    const missing = join(dataDir, "no-such-shared", "data");
    const run = spawnSync(process.execPath, [join(ROOT, "node_modules/tsx/dist/cli.mjs"), "build/cli.ts", "build"], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, BALLAST_CAPTURE_DIR: missing, BALLAST_DATA_DIR: dataDir, BALLAST_LOG: "info" },
    });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr.trimEnd().split("\n")).toEqual([
      `error: capture directory ${missing} not found: put the recorded data at ../shared/data beside the checkout or set BALLAST_CAPTURE_DIR`,
    ]);
    expect(existsSync(join(dataDir, "latest.json"))).toBe(false);
  });
});
