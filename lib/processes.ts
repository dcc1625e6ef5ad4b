import { readFileSync } from "node:fs";

/**
 * Liveness of local processes by pid, for sweeping what a killed process left (temp files, scratch
 * folders, operator jobs it owned). A pid can be reused after its process exits; `processStartToken`
 * tells a reuse apart where the OS exposes start times (Linux `/proc`).
 */

/** Fields of `/proc/<pid>/stat` after the command name: [state, ppid, …]; null when not readable (no such process, or no /proc). */
function procStat(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/**
 * True when a process with this pid runs on this host: signal 0 only checks (EPERM: it runs, as
 * another user); a zombie (exited, not yet reaped by its parent) counts as gone.
 */
export function processRuns(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return procStat(pid)?.[0] !== "Z";
}

/**
 * An opaque token of when process `pid` started (Linux: `starttime` of `/proc/<pid>/stat`, clock ticks
 * since boot), equal for the same process and different for a later one reusing the pid; null where
 * it is not known (no such process, or no `/proc`).
 */
export function processStartToken(pid: number): string | null {
  return procStat(pid)?.[19] ?? null;
}
