import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../api/lib/jobs.ts";
import { SnapshotIndexSchema } from "../../site-data/snapshot.ts";

// Issue 30 item 2: `make backfill` killed (kill -9) in the middle of its second day. The rerun removes
// what the killed run left (its scratch folder in the temp dir, an unfinished write in storage) and
// resumes after the last published day: the first day is skipped, only the second is built.
const dataDir = mkdtempSync(join(tmpdir(), "ballast-resume-data-"));
const scratch = mkdtempSync(join(tmpdir(), "ballast-resume-tmp-")); // the runs' TMPDIR: their scratch alone
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

/** `tsx build/cli.ts build --from 2023-03-11 --to 2023-03-12` (= make backfill) as a child process. */
function backfill() {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "build/cli.ts", "build", "--from", "2023-03-11", "--to", "2023-03-12"],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, BALLAST_DATA_DIR: dataDir, TMPDIR: scratch, BALLAST_LOG: "silent" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const out = { stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out.stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    out.stderr += d;
  });
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return { pid: child.pid ?? -1, kill: () => child.kill("SIGKILL"), out, exited };
}

const scratchOf = (pid: number) => readdirSync(scratch).filter((n) => n.startsWith(`ballast-emit-${pid}-`));
const published = (day: string) => existsSync(join(dataDir, `snapshots/${day}.json`));

describe("a killed backfill", () => {
  it("leaves scratch behind when killed on its second day; the rerun removes it and builds only that day", async () => {
    const first = backfill();
    let exitCode: number | null | undefined;
    void first.exited.then((c) => {
      exitCode = c;
    });
    // The first day is published, and the second is being emitted (its scratch folder exists): kill -9.
    const state = () =>
      exitCode !== undefined
        ? `exited (${exitCode}) before the second day was in flight`
        : published("2023-03-11") && scratchOf(first.pid).length > 0
          ? "in flight"
          : "waiting";
    await expect.poll(state, { timeout: 600_000, interval: 50 }).not.toBe("waiting");
    expect(state()).toBe("in flight");
    first.kill();
    await first.exited;
    expect(published("2023-03-12")).toBe(false);
    expect(scratchOf(first.pid)).toHaveLength(1);
    // An unfinished write of the killed run, as the fs sink names it (`<key>.<pid>.<rand>.tmp`).
    const unfinished = join(dataDir, `snapshots/2023-03-12.json.${first.pid}.k2x9.tmp`);
    writeFileSync(unfinished, '{"version":');

    const second = backfill();
    expect(await second.exited).toBe(0);
    expect(second.out.stdout).toContain("snapshots 2023-03-11 → 2023-03-12: 1 built, 1 already published (skipped)");
    expect(second.out.stderr).toMatch(/1\/2 2023-03-11 already published\n.*2\/2 2023-03-12 built in/);
    expect(scratchOf(first.pid)).toEqual([]);
    expect(existsSync(unfinished)).toBe(false);
    const index = SnapshotIndexSchema.parse(JSON.parse(readFileSync(join(dataDir, "snapshots/index.json"), "utf8")));
    expect(index.snapshots.map((r) => r.snapshotDate)).toEqual(["2023-03-12", "2023-03-11"]);
  });
});
