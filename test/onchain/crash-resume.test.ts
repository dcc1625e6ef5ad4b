import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createTestClient, http } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerStore } from "../../pipelines/onchain/ledger-store.ts";
import {
  ACTORS,
  type AnvilScenario,
  type ExpectedEvent,
  expectedView,
  rowView,
  startAnvilScenario,
} from "../helpers/anvil.ts";

// kill -9 of an ingestion process (the real CLI) at arbitrary points, then restart: after every kill
// each config's rows are exactly the expected rows up to its cursor (a range and its cursor commit
// together), and the final run leaves exactly the expected set.

const ROOT = resolve(import.meta.dirname, "../..");
let s: AnvilScenario;
let dir: string;
let expected: ExpectedEvent[];

beforeAll(async () => {
  s = await startAnvilScenario();
  dir = mkdtempSync(join(tmpdir(), "ballast-onchain-crash-"));
  // Spread more history over ~130 blocks so a run has many ranges to be killed in.
  const test = createTestClient({ mode: "anvil", transport: http(s.rpcUrl) });
  const { usdt, usdc, usdp } = s.contracts;
  expected = [...s.expected];
  for (let i = 0; i < 4; i++) {
    await test.mine({ blocks: 25 });
    const amount = BigInt(1000 + i);
    const m = await s.send(usdc, "mint", [ACTORS.erin, amount]);
    expected.push(
      ...s.expectFrom(m, usdc, [
        { event: "Transfer", kind: "mint", address: ACTORS.erin, amount, source: "event", purpose: "supply" },
      ]),
    );
    const iss = await s.send(usdt, "issue", [amount]);
    expected.push(
      ...s.expectFrom(iss, usdt, [
        { event: "Issue", kind: "mint", address: s.owner, amount, source: "event", purpose: "supply" },
      ]),
    );
    const f = await s.send(usdp, i % 2 === 0 ? "freeze" : "unfreeze", [ACTORS.carol]);
    expected.push(
      ...s.expectFrom(f, usdp, [
        {
          event: i % 2 === 0 ? "AddressFrozen" : "AddressUnfrozen",
          kind: i % 2 === 0 ? "blacklist" : "unblacklist",
          address: ACTORS.carol,
          amount: 0n,
          source: "historical_balance",
          purpose: "freeze",
        },
      ]),
    );
  }
});
afterAll(async () => {
  await s?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  commits: number;
  stdout: string;
}

/** Runs `onchain-cli ingest` in a child node process; with `killAfterCommits`, SIGKILLs it `delayMs` after that many committed ranges. */
function runIngest(
  ledgerPath: string,
  registryPath: string,
  killAfterCommits?: number,
  delayMs = 0,
): Promise<ChildRun> {
  return new Promise((res, rej) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "build/onchain-cli.ts",
        "ingest",
        "--ledger",
        ledgerPath,
        "--registry",
        registryPath,
        "--chunkSize",
        "5",
      ],
      {
        cwd: ROOT,
        env: { ...process.env, BALLAST_RPC_ETHEREUM: s.rpcUrl, BALLAST_SAFE_LAG_ETHEREUM: "0", BALLAST_LOG: "info" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let commits = 0,
      stdout = "",
      buf = "",
      killing = false;
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      buf += d;
      const lines = buf.split("\n");
      buf = lines.pop() ?? "";
      for (const l of lines) if (l.includes('"range committed"')) commits += 1;
      if (killAfterCommits !== undefined && !killing && commits >= killAfterCommits) {
        killing = true;
        setTimeout(() => child.kill("SIGKILL"), delayMs);
      }
    });
    child.on("error", rej);
    child.on("exit", (code, signal) => res({ code, signal, commits, stdout }));
  });
}

describe("crash (kill -9) and resume", () => {
  it("never loses or duplicates a row", async () => {
    const ledgerPath = join(dir, "onchain.duckdb");
    const registryPath = join(dir, "registry.json");
    writeFileSync(registryPath, JSON.stringify(s.registry));
    const head = Number(await s.publicClient.getBlockNumber());
    const rowsOf = <T extends { config_key: string; block_number: number }>(
      rows: T[],
      key: string,
      upTo = Number.MAX_SAFE_INTEGER,
    ) => rows.filter((r) => r.config_key === key && r.block_number <= upTo);
    let killed = 0;
    for (const [after, delay] of [
      [2, 0],
      [9, 11],
      [18, 3],
    ] as const) {
      const run = await runIngest(ledgerPath, registryPath, after, delay);
      if (run.signal === "SIGKILL") killed += 1;
      const ledger = await LedgerStore.open(ledgerPath);
      try {
        const rows = await ledger.events();
        const cursors = await ledger.cursors();
        expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
        for (const c of s.configs) {
          const cur = cursors.find((x) => x.configKey === c.configKey);
          const upTo = cur ? cur.lastBlock : -1;
          // exactly the expected rows up to the cursor: nothing lost below it, nothing committed above it
          expect(rowView(rowsOf(rows, c.configKey))).toEqual(
            rowView(
              rowsOf(
                expected.map((e) => ({ ...e, config_key: e.configKey })),
                c.configKey,
                upTo,
              ),
            ),
          );
        }
      } finally {
        await ledger.close();
      }
    }
    expect(killed).toBe(3);
    const final = await runIngest(ledgerPath, registryPath);
    expect(final.code).toBe(0);
    expect(JSON.parse(final.stdout).ok).toBe(true);
    const ledger = await LedgerStore.open(ledgerPath);
    try {
      expect(rowView(await ledger.events())).toEqual(expectedView(expected));
      expect((await ledger.cursors()).map((c) => c.lastBlock)).toEqual(s.configs.map(() => head));
    } finally {
      await ledger.close();
    }
  });
});
