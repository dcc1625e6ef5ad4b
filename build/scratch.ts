import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { processRuns } from "../lib/processes.ts";
import { log, type Logger } from "./log.ts";
import type { PublishSink, Sink } from "./sinks/sink.ts";

/**
 * Scratch folders of builds and snapshot backfills (DuckDB spill files, emitter intermediates, spooled
 * bodies) are named after the process that made them: `ballast-<kind>-<pid>-<random>`. A run removes
 * its own when it ends; a killed one cannot, so every run first removes those of processes that no
 * longer run (sweepScratch). Folders of live processes, and folders named otherwise, are left alone.
 */

/** What a scratch folder holds: a build's run folder (`build`) or the emit stage's (`emit`). */
export type ScratchKind = "build" | "emit";

/** `mkdtemp` prefix of this process's scratch folders of `kind`: `ballast-<kind>-<pid>-`. */
export function scratchPrefix(kind: ScratchKind): string {
  return `ballast-${kind}-${process.pid}-`;
}

/** A scratch folder name and the pid in it. */
const SCRATCH_FOLDER = /^ballast-(?:build|emit)-(\d+)-[^/]+$/;

/**
 * Removes the scratch folders under `dir` whose process no longer runs (SCRATCH_FOLDER, processRuns);
 * a missing `dir` has none. Returns the names removed (logged to `logger` when any).
 */
export async function sweepScratch(dir: string, logger: Logger = log): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const dead = names.filter((n) => {
    const pid = SCRATCH_FOLDER.exec(n)?.[1];
    return pid !== undefined && Number(pid) !== process.pid && !processRuns(Number(pid));
  });
  for (const n of dead) await rm(join(dir, n), { recursive: true, force: true });
  if (dead.length) logger("info", "scratch", "removed scratch folders of killed runs", { dir, folders: dead });
  return dead;
}

/**
 * Deletes the temporary objects a killed writer left in `sink` (PublishSink.listAbandoned: fs
 * `<key>.<pid>.<rand>.tmp` files of dead pids), not looking in `skipFolders`; nothing for a sink
 * without temporary objects. Returns their keys.
 */
export async function sweepAbandoned(sink: Sink, skipFolders: readonly string[] = []): Promise<string[]> {
  const list = (sink as Partial<Pick<PublishSink, "listAbandoned">>).listAbandoned;
  if (!list) return [];
  const keys = await list.call(sink, skipFolders);
  for (const key of keys) await sink.delete(key);
  return keys;
}
