/**
 * Loaded first (`node --import`) by every operator job child (./jobs.ts childProcessExecutor): when
 * the API process that started it dies without stopping it (kill -9, OOM), the child is re-parented
 * and `process.ppid` changes; the guard then sends SIGTERM to its own process group (the child leads
 * it, so whatever it started stops too) and exits with 143. Checks every `GUARD_POLL_MS`; its timer
 * never keeps the child alive. Does nothing without `BALLAST_PARENT_PID`.
 */

/** How often the guard compares `process.ppid` with the parent it was started by (ms). */
export const GUARD_POLL_MS = 500;

const parent = Number(process.env.BALLAST_PARENT_PID);
if (Number.isInteger(parent) && parent > 0) {
  // Grandchildren are not guarded by this variable: they have another parent.
  delete process.env.BALLAST_PARENT_PID;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    try {
      process.kill(-process.pid, "SIGTERM");
    } catch {
      // not a group leader (started without detached): stop this process alone
    }
    process.exit(143);
  }, GUARD_POLL_MS);
  timer.unref();
}
