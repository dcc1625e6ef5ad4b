/**
 * Structured JSON-line logger of the API process on stderr (the API may not import `build/log.ts`).
 * One line per call: `{"level","stage","msg",...extra}`; `BALLAST_LOG=silent` turns it off.
 */
export function apiLog(
  level: "info" | "warn" | "error",
  stage: string,
  msg: string,
  extra: Record<string, unknown> = {},
): void {
  if (process.env.BALLAST_LOG === "silent") return;
  process.stderr.write(`${JSON.stringify({ level, stage, msg, ...extra })}\n`);
}

/** Message of an unknown thrown value. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message || err.name : String(err);
}
