import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { createApp } from "../../api/app.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import type { BlacklistResponseSchema } from "../../api/queries/blacklist.ts";
import type { MintBurnEventsResponseSchema } from "../../api/queries/mint-burn.ts";
import { runBuild } from "../../build/run-build.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import { decimalString } from "../../pipelines/onchain/contract.ts";
import { syncAll } from "../../pipelines/onchain/ingest.ts";
import { LedgerStore } from "../../pipelines/onchain/ledger-store.ts";
import { EvmRpc } from "../../pipelines/sources/evm-rpc.ts";
import type { BlacklistEvent, BlacklistSummarySchema } from "../../site-data/blacklist.ts";
import { type AnvilScenario, startAnvilScenario } from "../helpers/anvil.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";

// A real node → the real ingestion → the on-chain ledger → a build → the API. Expected events are
// what the scenario sent to the chain (test/helpers/anvil.ts), never what the code under test wrote.
let scenario: AnvilScenario;
let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: SqlClient;
let app: ReturnType<typeof createApp>;
let token: string;

beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  scenario = await startAnvilScenario();
  const dir = mkdtempSync(join(tmpdir(), "ballast-onchain-live-"));
  const ledgerPath = join(dir, "onchain.duckdb");
  const ledger = await LedgerStore.open(ledgerPath);
  try {
    const results = await syncAll(
      ledger,
      new EvmRpc({ chains: { ethereum: { urls: [scenario.rpcUrl], lag: 0 } }, timeoutMs: 5000 }),
      scenario.configs,
    );
    expect(results.every((r) => r.status !== "failed")).toBe(true);
  } finally {
    await ledger.close();
  }
  // as of now: the anvil blocks carry wall-clock times
  await runBuild({
    asOf: Math.floor(Date.now() / 1000) + 60,
    captureDir: CAPTURE_DIR,
    sink: new FsSink(dir),
    warehousePath: null,
    registry: scenario.registry,
    onchainLedgerPath: ledgerPath,
  });
  schema = await createTestSchema("ballast_onchain_live");
  sql = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  const keys = new KeyStore(sql, "pepper-for-tests-0123456789");
  await keys.init();
  token = (await keys.create({ name: "t" })).token;
  app = createApp({
    store: new PublishedStore(fsReader(dir), 0),
    keys,
    limiter: new KeyRateLimiter(),
    corsOrigins: [],
    clockMode: "wall",
  });
});
afterAll(async () => {
  await scenario?.stop();
  await sql?.close();
  await schema?.drop();
});

/** The JSON body of a keyed GET of `path`, as the type `T` the test expects. */
async function get<T>(path: string): Promise<T> {
  return (await (await app.request(path, { headers: { "X-API-Key": token } })).json()) as T;
}
type BlacklistPage = z.infer<typeof BlacklistResponseSchema>;
const FREEZE = new Set(["blacklist", "unblacklist", "destroy"]);

describe("anvil → ingestion → build → /api/blacklist", () => {
  it("every freeze event emitted on the chain appears exactly once, with its amount", async () => {
    const expected = scenario.expected.filter((e) => FREEZE.has(e.kind));
    expect(expected.length).toBeGreaterThan(5);
    const live: BlacklistEvent[] = [];
    let cursor: string | null = null;
    do {
      const page: BlacklistPage = await get<BlacklistPage>(
        `/api/blacklist?limit=500${cursor ? `&cursor=${cursor}` : ""}`,
      );
      live.push(...page.events.filter((e) => e.origin === "live"));
      cursor = page.nextCursor;
    } while (cursor);
    expect(live.map((e) => e.id).sort()).toEqual(expected.map((e) => e.id).sort());
    const byId = new Map(live.map((e) => [e.id, e]));
    for (const e of expected) {
      expect(byId.get(e.id)).toMatchObject({
        eventType: e.kind,
        address: e.address,
        amountRaw: e.amount_raw,
        amountSource: e.amount_source,
        amountStatus: "resolved",
      });
    }
  });

  it("the summary's totals equal the sums computed from the chain (plus the recorded USDT history)", async () => {
    const summary = await get<z.infer<typeof BlacklistSummarySchema>>("/api/blacklist-summary");
    const expected = scenario.expected.filter((e) => FREEZE.has(e.kind));
    const count = (id: string) => expected.filter((e) => e.stablecoinId === id).length;
    expect(summary.stats.perCoinTotalEvents.USDC).toBe(count("usdc-circle"));
    expect(summary.stats.perCoinBlacklistCounts.USDC).toBe(
      expected.filter((e) => e.stablecoinId === "usdc-circle" && e.kind === "blacklist").length,
    );
    const csv = Papa.parse<Record<string, string>>(
      readFileSync(join(CAPTURE_DIR, "bhemen-usdt/usdt_configs.csv"), "utf8"),
      { header: true, skipEmptyLines: true },
    ).data;
    const recordedUsdt = csv
      .filter((r) => r.event_name === "DestroyedBlackFunds")
      .reduce((s, r) => s + BigInt(r._balance.replace(/\.0$/, "")), 0n);
    const chainUsdt = expected
      .filter((e) => e.stablecoinId === "usdt-tether" && e.kind === "destroy")
      .reduce((s, e) => s + BigInt(e.amount_raw), 0n);
    expect(chainUsdt).toBeGreaterThan(0n);
    expect(summary.stats.perCoinDestroyedTotalExact.USDT).toBe(decimalString(recordedUsdt + chainUsdt, 6));
    const chainUsdp = expected
      .filter((e) => e.stablecoinId === "usdp-paxos" && e.kind === "destroy")
      .reduce((s, e) => s + BigInt(e.amount_raw), 0n);
    const recordedWipe = 3972017929316571041737574n; // the recorded USDP wipe, derived from its SupplyDecreased
    expect(summary.stats.perCoinDestroyedTotalExact.USDP).toBe(decimalString(recordedWipe + chainUsdp, 18));
    expect(summary.reconciliation).toMatchObject({ status: "ok", duplicateIdentityCount: 0 });
  });

  it("mint/burn events of the chain appear once each in /api/mint-burn-events", async () => {
    for (const id of ["usdt-tether", "usdc-circle", "usdp-paxos"]) {
      const expected = scenario.expected.filter(
        (e) => e.stablecoinId === id && (e.kind === "mint" || e.kind === "burn"),
      );
      const page = await get<z.infer<typeof MintBurnEventsResponseSchema>>(
        `/api/mint-burn-events?stablecoin=${id}&limit=1000`,
      );
      const live = page.events.filter((e) => e.origin === "live");
      expect(live.map((e) => e.id).sort(), id).toEqual(expected.map((e) => e.id).sort());
      for (const e of expected)
        expect(live.find((x) => x.id === e.id)).toMatchObject({ direction: e.kind, amountRaw: e.amount_raw });
    }
  });
});
