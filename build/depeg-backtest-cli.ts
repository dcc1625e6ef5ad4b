import { BadInput, runDepegBacktest } from "./depeg-backtest.ts";

/**
 * `tsx build/depeg-backtest-cli.ts <dews-validation|audit> --as-of <Unix s> …` (a job of the operator
 * lane, see ./depeg-backtest.ts): prints the JSON result and exits 0; prints `{ error }` and exits 2 on
 * bad input, 1 on failure.
 */
async function main(): Promise<void> {
  try {
    process.stdout.write(`${JSON.stringify(await runDepegBacktest(process.argv.slice(2)))}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ error: (err as Error).message })}\n`);
    process.exitCode = err instanceof BadInput ? 2 : 1;
  }
}

await main();
