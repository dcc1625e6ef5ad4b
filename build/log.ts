/** Structured JSON-line logger on stderr; stdout stays free for data and CLI summaries. */
export function log(level: "info" | "warn" | "error", stage: string, msg: string, extra: Record<string, unknown> = {}): void {
  if (process.env.BALLAST_LOG === "silent") return;
  process.stderr.write(`${JSON.stringify({ level, stage, msg, ...extra })}\n`);
}
