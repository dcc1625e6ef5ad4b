/** Level of a structured log line. */
export type LogLevel = "info" | "warn" | "error";

/**
 * Where a build's structured logs go: one call per event, `stage` naming the build stage (`load`,
 * `model`, `emit`, `publish`, …) and `extra` holding JSON-serialisable fields. Never throws.
 */
export type Logger = (level: LogLevel, stage: string, msg: string, extra?: Record<string, unknown>) => void;

/**
 * Structured JSON-line logger on stderr (the default Logger); stdout stays free for data and CLI
 * summaries. `BALLAST_LOG=silent` drops every line.
 */
export function log(level: LogLevel, stage: string, msg: string, extra: Record<string, unknown> = {}): void {
  if (process.env.BALLAST_LOG === "silent") return;
  process.stderr.write(`${JSON.stringify({ level, stage, msg, ...extra })}\n`);
}
