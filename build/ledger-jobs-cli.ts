import { BadInput } from "./backfill-history.ts";
import { runMintBurnPrices, runReclassifyAtomicRoundtrips } from "./ledger-jobs.ts";
import { parseJobArgs } from "./onchain-cli.ts";

/**
 * `tsx build/ledger-jobs-cli.ts <job> [--param value ...]` (jobs of the operator lane, see ./ledger-jobs.ts):
 *   mint-burn-prices --to <YYYY-MM-DD> [--ledger PATH]
 *   reclassify-atomic-roundtrips [--ledger PATH] [--captureDir D]
 * Prints the JSON result and exits 0; prints `{ error }` and exits 2 on bad input (unknown job or
 * flag, no published build); 1 on any other failure.
 */
async function main(): Promise<void> {
  try {
    const [job, ...rest] = process.argv.slice(2);
    const args = parseJobArgs(rest);
    let result: unknown;
    if (job === "mint-burn-prices") result = await runMintBurnPrices(args);
    else if (job === "reclassify-atomic-roundtrips") result = await runReclassifyAtomicRoundtrips(args);
    else throw new BadInput(`unknown job ${job}: mint-burn-prices or reclassify-atomic-roundtrips`);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ error: (err as Error).message })}\n`);
    process.exitCode = err instanceof BadInput || (err as Error).name === "JobInputError" ? 2 : 1;
  }
}

await main();
