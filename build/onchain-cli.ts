import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type OnchainEventRow, OnchainEventRowSchema } from "../pipelines/onchain/contract.ts";
import { onchainEventsEndpoint } from "../pipelines/sources/onchain/onchain-events.ts";
import { RECORDED_CAPTURES } from "../pipelines/sources/recorded-captures.ts";
import { createTronGridClient, TRONGRID_BASE_URL } from "../pipelines/sources/trongrid.ts";
import {
  backfillBlacklistCurrentBalances,
  backfillMintBurn,
  debugSyncState,
  JobInputError,
  remediateBlacklistAmountGaps,
  resetBlacklistSync,
  runIngest,
} from "../pipelines/onchain/jobs.ts";
import { defaultLedgerPath, LedgerStore } from "../pipelines/onchain/ledger-store.ts";
import { trackedConfigs } from "../pipelines/onchain/tracked.ts";
import { loadRegistry, REGISTRY_PATH } from "../pipelines/registry/registry.ts";
import { EvmRpc } from "../pipelines/sources/evm-rpc.ts";
import { log } from "./log.ts";

/**
 * On-chain ledger jobs from the command line:
 *   npx tsx build/onchain-cli.ts <job> [--param value | --param=value ...]
 * Prints the job's result as one JSON document on stdout; logs JSON lines on stderr (BALLAST_LOG=silent
 * silences them). Exit codes: 0 ok, 1 failure (or an ingest with a failed config), 2 bad input (the
 * HTTP-400 class: JobInputError), in which case stdout is `{ "error": message }`.
 *
 * Common options: `--ledger PATH` (default `<BALLAST_DATA_DIR or ./data>/onchain.duckdb`),
 * `--registry PATH` (default pipelines/registry/registry.json). RPC providers come from
 * `BALLAST_RPC_<CHAIN>` (pipelines/sources/evm-rpc.ts). Parameter names are the spec's camelCase;
 * kebab-case (`--dry-run`, `--chunk-size`) is accepted too.
 */
export const ONCHAIN_USAGE = `usage: tsx build/onchain-cli.ts <job> [--param value ...]   (options: --ledger PATH, --registry PATH)
  ingest [--configKey K] [--chunkSize N≤50000] [--maxChunks N] [--reorgDepth N]   sync every supported EVM config to the safe head
  reset-blacklist-sync                                   roll freeze cursors back (EVM 50000 blocks, Tron 7 days)
  debug-sync-state                                       print [{config_key, last_block}]
  backfill-mint-burn --configKey K --fromBlock N --toBlock N [--chunkSize N≤50000] [--maxChunks N (24)]
  remediate-blacklist-amount-gaps [--chainId C] [--stablecoin S] [--limit N≤200 (25)] [--dryRun true|false (true)] [--onlyMissingProvenance true|false (true)] [--maxAttempts N (25)] [--captureDir D (BALLAST_CAPTURE_DIR; recorded freeze logs count too)]
  backfill-blacklist-current-balances [--stablecoin S] [--chainId C] [--limit N≤2000 (500)] [--dryRun true|false (true)]`;

/** Recorded inputs beside the checkout (build/config.ts default of BALLAST_CAPTURE_DIR). */
const DEFAULT_CAPTURE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../shared/data");

/**
 * The decoded on-chain rows of the recorded public captures (RECORDED_CAPTURES of endpoint
 * `onchain.events`: bhemen USDT/USDP/PYUSD archives) in `captureDir`, each checked against
 * OnchainEventRowSchema (a bad row is skipped). A missing file contributes nothing (the ledger alone
 * is then what the job sees). Throws when a present file cannot be read.
 */
export function recordedOnchainRows(captureDir: string): OnchainEventRow[] {
  const out: OnchainEventRow[] = [];
  for (const rc of RECORDED_CAPTURES) {
    if (rc.endpoint !== onchainEventsEndpoint.key) continue;
    const file = join(captureDir, rc.file);
    if (!existsSync(file)) continue;
    for (const c of rc.read(readFileSync(file, "utf8")).captures) {
      const rows = (c.payload as { rows?: unknown[] }).rows ?? [];
      for (const r of rows) {
        const ok = OnchainEventRowSchema.safeParse(r);
        if (ok.success) out.push(ok.data);
      }
    }
  }
  return out;
}

const JOBS = new Set([
  "ingest",
  "reset-blacklist-sync",
  "debug-sync-state",
  "backfill-mint-burn",
  "remediate-blacklist-amount-gaps",
  "backfill-blacklist-current-balances",
]);

/** `--dry-run` → `dryRun`. */
function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Parses `--k v` / `--k=v` pairs into a params object. Throws JobInputError on a stray argument or a flag without value. */
export function parseJobArgs(args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith("--")) throw new JobInputError(`unexpected argument: ${a}`);
    const eq = a.indexOf("=");
    if (eq > 0) {
      out[camel(a.slice(2, eq))] = a.slice(eq + 1);
      continue;
    }
    const v = args[i + 1];
    if (v === undefined || v.startsWith("--")) throw new JobInputError(`${a} needs a value`);
    out[camel(a.slice(2))] = v;
    i += 1;
  }
  return out;
}

const jobLog = (level: "info" | "warn" | "error", msg: string, extra: Record<string, unknown> = {}) =>
  log(level, "onchain", msg, extra);

/**
 * Runs one on-chain job. `argv` = `[job, ...--params]` (what follows `onchain` in `build/cli.ts`).
 * Opens the ledger for the job and always closes it. Resolves to the process exit code (0 ok, 1
 * failure, 2 bad input); never throws.
 */
export async function runOnchainCli(argv: string[]): Promise<number> {
  const [job, ...rest] = argv;
  if (!job || !JOBS.has(job)) {
    process.stdout.write(`${ONCHAIN_USAGE}\n`);
    return job && job !== "help" && job !== "--help" ? 2 : 0;
  }
  let ledger: LedgerStore | null = null;
  try {
    const { ledger: ledgerPath, registry: registryPath, ...params } = parseJobArgs(rest);
    const configs = trackedConfigs(loadRegistry(registryPath ?? REGISTRY_PATH));
    let client: EvmRpc | null = null;
    const rpc = () => (client ??= EvmRpc.fromEnv(process.env, { log: jobLog }));
    ledger = await LedgerStore.open(ledgerPath ?? defaultLedgerPath());
    let result: unknown;
    let code = 0;
    switch (job) {
      case "ingest": {
        // Tron freeze configs through TronGrid (BALLAST_TRONGRID_URL, optional TRONGRID_API_KEY).
        const tron = {
          client: createTronGridClient({
            baseUrl: process.env.BALLAST_TRONGRID_URL ?? TRONGRID_BASE_URL,
            apiKey: process.env.TRONGRID_API_KEY,
          }),
        };
        const r = await runIngest(ledger, rpc(), configs, params, { log: jobLog, tron });
        result = r;
        code = r.ok ? 0 : 1;
        break;
      }
      case "reset-blacklist-sync":
        result = await resetBlacklistSync(ledger, configs);
        break;
      case "debug-sync-state":
        result = await debugSyncState(ledger);
        break;
      case "backfill-mint-burn":
        result = await backfillMintBurn(ledger, rpc(), configs, params, { log: jobLog });
        break;
      case "remediate-blacklist-amount-gaps": {
        const { captureDir, ...rest } = params;
        const recorded = recordedOnchainRows(captureDir ?? process.env.BALLAST_CAPTURE_DIR ?? DEFAULT_CAPTURE_DIR);
        result = await remediateBlacklistAmountGaps(ledger, rpc(), configs, rest, { log: jobLog, recorded });
        break;
      }
      case "backfill-blacklist-current-balances":
        result = await backfillBlacklistCurrentBalances(ledger, rpc(), configs, params, { log: jobLog });
        break;
    }
    if (client) await ledger.saveProviderStates((client as EvmRpc).providerStates());
    process.stdout.write(`${JSON.stringify(result, null, 1)}\n`);
    return code;
  } catch (err) {
    const e = err as Error;
    process.stdout.write(`${JSON.stringify({ error: e.message })}\n`);
    jobLog("error", `${job} failed`, { error: e.message, name: e.name });
    return err instanceof JobInputError || e.name === "RpcConfigError" ? 2 : 1;
  } finally {
    await ledger?.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runOnchainCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
