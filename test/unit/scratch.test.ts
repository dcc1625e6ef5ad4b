import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { scratchPrefix, sweepAbandoned, sweepScratch } from "../../build/scratch.ts";
import { FsSink } from "../../build/sinks/fs.ts";

// Issue 30 item 2: what a killed build or backfill left (scratch folders, unfinished writes) is removed
// by the next run; what a live process holds is not.
const dir = mkdtempSync(join(tmpdir(), "ballast-scratch-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The pid of a process that has exited (and been reaped). */
const deadPid = () => must(spawnSync(process.execPath, ["-e", "0"]).pid);
function must(pid: number | undefined): number {
  if (pid === undefined) throw new Error("no pid");
  return pid;
}

describe("sweepScratch", () => {
  it("removes the scratch folders of dead pids only", async () => {
    const dead = deadPid();
    const live = process.ppid; // the test runner's parent still runs
    const names = [
      `ballast-build-${dead}-a1b2c3`,
      `ballast-emit-${dead}-d4e5f6`,
      `ballast-build-${live}-g7h8i9`,
      `${scratchPrefix("emit")}j0k1l2`,
      "ballast-build-m3n4o5", // named before folders carried a pid: never guessed at
      "ballast-staged-captures",
    ];
    for (const n of names) {
      mkdirSync(join(dir, n, "duckdb"), { recursive: true });
      writeFileSync(join(dir, n, "duckdb", "spill.tmp"), "x");
    }
    const removed = await sweepScratch(dir, () => undefined);
    expect(removed.sort()).toEqual([`ballast-build-${dead}-a1b2c3`, `ballast-emit-${dead}-d4e5f6`]);
    expect(readdirSync(dir).sort()).toEqual(names.slice(2).sort());
    expect(await sweepScratch(join(dir, "missing"))).toEqual([]);
  });

  it("sweepAbandoned deletes the unfinished writes of dead pids in a sink, not those of live writers", async () => {
    const root = join(dir, "sink");
    mkdirSync(join(root, "snapshots"), { recursive: true });
    const deadTmp = `snapshots/2023-03-12.json.${deadPid()}.k2x9.tmp`;
    const liveTmp = `snapshots/2023-03-13.json.${process.pid}.z7q1.tmp`;
    for (const k of [deadTmp, liveTmp, "snapshots/2023-03-11.json"]) writeFileSync(join(root, k), "{}");
    expect(await sweepAbandoned(new FsSink(root))).toEqual([deadTmp]);
    expect([deadTmp, liveTmp].map((k) => existsSync(join(root, k)))).toEqual([false, true]);
  });
});
