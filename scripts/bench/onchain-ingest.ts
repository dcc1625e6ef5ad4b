import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { syncAll } from "../../pipelines/onchain/ingest.ts";
import { LedgerStore } from "../../pipelines/onchain/ledger-store.ts";
import { trackedConfigs } from "../../pipelines/onchain/tracked.ts";
import { EvmRpc } from "../../pipelines/sources/evm-rpc.ts";
import { ACTORS, deployFixtures, scenarioRegistry, startAnvil } from "../../test/helpers/anvil.ts";

/**
 * On-chain ingestion benchmark: starts anvil, deploys the fixture tokens (test/fixtures/contracts)
 * and emits `events` logs in batches of 1,000 per transaction — half USDC-like zero-address Transfer
 * mints, a quarter USDT-like `Issue(uint256)` (address-less: the sender is read per transaction), a
 * quarter Paxos-like `SupplyIncreased` — then ingests them with the real code (EvmRpc eth_getLogs,
 * header reads, decode, one ledger transaction per config) into a fresh temporary ledger, `runs`
 * times. Returns the median run: `{ logs, seconds, logsPerSec }` (logs = rows written per run).
 * Throws when a run does not write exactly the emitted number of rows.
 */
export async function benchOnchainIngest(
  opts: { events?: number; runs?: number } = {},
): Promise<{ logs: number; seconds: number; logsPerSec: number }> {
  const events = opts.events ?? 20_000;
  const runs = opts.runs ?? 3;
  const perTx = 1000;
  if (events % (4 * perTx) !== 0) throw new RangeError(`events must be a multiple of ${4 * perTx}`);
  const anvil = await startAnvil();
  const dir = mkdtempSync(join(tmpdir(), "ballast-bench-onchain-"));
  try {
    const f = await deployFixtures(anvil);
    const { usdt, usdc, usdp } = f.contracts;
    for (let i = 0; i < events / 2 / perTx; i++)
      await f.send(usdc, "mintMany", [ACTORS.erin, BigInt(perTx), 1_000_000n + BigInt(i)]);
    for (let i = 0; i < events / 4 / perTx; i++) await f.send(usdt, "issueMany", [BigInt(perTx), 5_000_000n]);
    for (let i = 0; i < events / 4 / perTx; i++) await f.send(usdp, "increaseSupplyMany", [BigInt(perTx), 10n ** 18n]);
    const configs = trackedConfigs(scenarioRegistry([usdt, usdc, usdp])).filter((c) => c.purpose === "supply");
    const times: number[] = [];
    for (let r = 0; r < runs; r++) {
      const ledger = await LedgerStore.open(join(dir, `run-${r}.duckdb`));
      try {
        const rpc = new EvmRpc({ chains: { ethereum: { urls: [anvil.rpcUrl], lag: 0 } }, timeoutMs: 60_000 });
        const t0 = performance.now();
        const res = await syncAll(ledger, rpc, configs);
        times.push((performance.now() - t0) / 1000);
        const written = await ledger.countEvents();
        if (written !== events || res.some((x) => x.status !== "synced"))
          throw new Error(
            `bench run ${r}: wrote ${written} rows of ${events} (${res.map((x) => x.reason).join(", ")})`,
          );
      } finally {
        await ledger.close();
      }
    }
    const seconds = times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
    return { logs: events, seconds: Math.round(seconds * 1000) / 1000, logsPerSec: Math.round(events / seconds) };
  } finally {
    await anvil.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchOnchainIngest().then(
    (r) => process.stdout.write(`${JSON.stringify(r)}\n`),
    (err) => {
      process.stderr.write(`${err.stack ?? err}\n`);
      process.exitCode = 1;
    },
  );
}
