import { BadInput, runHistoryBackfill } from "./backfill-history.ts";

/**
 * `tsx build/backfill-history-cli.ts <job> --coins <id,…> --to <YYYY-MM-DD>` (a job of the operator lane,
 * see ./backfill-history.ts): prints the JSON result and exits 0; prints `{ error }` and exits 2 on bad
 * input; exits 1 when no capture succeeded or a snapshot build failed.
 */
async function main(): Promise<void> {
  try {
    const result = await runHistoryBackfill(process.argv.slice(2));
    process.stdout.write(`${JSON.stringify(result)}\n`);
    if (!result.captured.length && result.failed.length) {
      process.stderr.write(`no capture succeeded: ${result.failed.map((f) => f.message).join("; ")}\n`);
      process.exitCode = 1;
    }
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ error: (err as Error).message })}\n`);
    process.exitCode = err instanceof BadInput ? 2 : 1;
  }
}

await main();
