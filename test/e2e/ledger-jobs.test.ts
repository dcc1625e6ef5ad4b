import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordedOnchainRows } from "../../build/onchain-cli.ts";
import type { OnchainEventRow } from "../../pipelines/onchain/contract.ts";
import { LedgerStore } from "../../pipelines/onchain/ledger-store.ts";
import { buildRecorded, CAPTURE_DIR, RECORDED_AS_OF } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";
import { type HistoryReplay, type OpsLane, startOpsLane } from "../helpers/ops.ts";
import type { ReclassifyResult } from "../../build/ledger-jobs.ts";

// Issue 31 item 1: backfill-mint-burn-prices and reclassify-atomic-roundtrips are real ledger jobs
// (build/ledger-jobs.ts) run by the operator lane against the recorded build (serving, as of 2025-09-07)
// and an on-chain ledger; the on-chain routes' coin/config filters are checked against what that build
// publishes, 400 before any job starts. Expected figures come from the recorded CSVs (papaparse) and
// the ledger rows this test writes, never from the code under test.

let lane: OpsLane;
let replay: HistoryReplay;
let dataDir: string;
let ledgerPath: string;

beforeAll(async () => {
  ({ dir: dataDir } = await buildRecorded("ballast-ledger-jobs-"));
  ledgerPath = join(dataDir, "onchain.duckdb");
  lane = await startOpsLane({
    schemaPrefix: "ballast_ledger_jobs",
    dataDir,
    ledgerPath,
    replay: { captureDir: CAPTURE_DIR, from: "2023-03-10", to: "2023-03-12" },
  });
  replay = must(lane.replay, "the history replay servers");
}, 300_000);
afterAll(async () => {
  await lane?.close();
});

const post = (path: string, headers: Record<string, string> = {}) => lane.call("POST", path, headers);
const jobCount = () => lane.jobCount();
const runToEnd = <T>(path: string, headers: Record<string, string> = {}) => lane.runToEnd<T>(path, headers);

const csv = (path: string) =>
  Papa.parse<Record<string, string>>(readFileSync(join(CAPTURE_DIR, path), "utf8"), {
    header: true,
    skipEmptyLines: true,
  }).data;

/**
 * Transactions of the recorded mint/burn logs holding both a mint and a burn of their coin (the
 * round-trip groups of the recorded data): USDT Issue/Redeem, USDP and PYUSD SupplyIncreased/SupplyDecreased.
 */
function recordedGroups(): number {
  const sides = new Map<string, Set<string>>();
  const add = (coin: string, tx: string, side: string) => {
    const k = `${coin}|${tx.toLowerCase().replace(/^(0x)?/, "0x")}`;
    sides.set(k, (sides.get(k) ?? new Set()).add(side));
  };
  const side = (event: string) =>
    ({ Issue: "mint", SupplyIncreased: "mint", Redeem: "burn", SupplyDecreased: "burn" })[event];
  for (const r of csv("bhemen-usdt/usdt_configs.csv"))
    if (side(r.event_name)) add("usdt", r.txhash, must(side(r.event_name), "side"));
  for (const r of csv("bhemen-paxos-coins/usdp_configs.csv"))
    if (side(r.event_name)) add("usdp", r.txhash, must(side(r.event_name), "side"));
  for (const r of csv("bhemen-crypto-insights/pyusd/pyusd_supply_events.csv"))
    if (side(r.event)) add("pyusd", r.transactionHash, must(side(r.event), "side"));
  return [...sides.values()].filter((s) => s.size === 2).length;
}

// Ledger rows written by this test: GROUPS transactions of PYUSD on Ethereum, each a mint and a burn of
// the same amount (an atomic round trip), made from a recorded PYUSD mint row (config, contract, decimals).
const GROUPS = 1001;
const TS0 = 1_700_000_000;
const txOf = (i: number) => `0x${(0xa000000 + i).toString(16).padStart(64, "0")}`;
const tsOf = (i: number) => TS0 + i * 60;

function fixtureRows(): OnchainEventRow[] {
  const template = must(
    recordedOnchainRows(CAPTURE_DIR).find((r) => r.stablecoin_id === "pyusd-paypal" && r.kind === "mint"),
    "a recorded PYUSD mint",
  );
  const rows: OnchainEventRow[] = [];
  for (let i = 0; i < GROUPS; i++)
    for (const [kind, logIndex] of [
      ["mint", 1],
      ["burn", 2],
    ] as const)
      rows.push({
        ...template,
        id: `ethereum-${txOf(i)}-${logIndex}`,
        kind,
        event_name: kind === "mint" ? "SupplyIncreased" : "SupplyDecreased",
        amount_raw: "250000000000",
        tx_hash: txOf(i),
        block_number: 30_000_000 + i,
        block_hash: null,
        log_index: logIndex,
        ts: tsOf(i),
        origin: "live",
      });
  return rows;
}

/** The job's stdout (its type, not its values: the expected figures come from the recorded CSVs). */
type Reclassified = ReclassifyResult;

describe("ledger jobs (issue 31 item 1)", () => {
  it("reclassify-atomic-roundtrips: 1000 groups per call, every changed row reported, repeat until done", async () => {
    const recorded = recordedGroups();
    // the serving build publishes the recorded rows as classified from the same logs: nothing changes
    const first = await runToEnd<Reclassified>("/api/reclassify-atomic-roundtrips");
    expect(first.job.error).toBeNull();
    expect(first.job.result).toMatchObject({ done: true, updated: 0, hoursRecalculated: 0, batchSize: 1000 });
    expect(first.job.result.groupsTotal).toBe(recorded);
    expect(existsSync(join(dataDir, "jobs/reclassify-atomic-roundtrips.json"))).toBe(false);

    const ledger = await LedgerStore.open(ledgerPath);
    try {
      const rows = fixtureRows();
      const configKey = rows[0].config_key;
      await ledger.commitRange({ configKey, rows, nowSec: TS0 + GROUPS * 60 });
    } finally {
      await ledger.close();
    }
    const hours = (from: number, to: number) =>
      new Set(Array.from({ length: to - from }, (_, k) => tsOf(from + k) - (tsOf(from + k) % 3600))).size;

    const a = await runToEnd<Reclassified>("/api/reclassify-atomic-roundtrips", { "Idempotency-Key": "rt-1" });
    expect(a.job.error).toBeNull();
    const r1 = a.job.result;
    expect([r1.done, r1.groups, r1.groupsTotal]).toEqual([false, 1000, GROUPS + recorded]);
    // the serving build does not publish the new rows (before null); the build's rule makes each pair atomic
    expect(r1.updated).toBe(2000);
    expect(r1.changes.map((c) => c.id).sort()).toEqual(
      Array.from({ length: 1000 }, (_, i) => [1, 2].map((l) => `ethereum-${txOf(i)}-${l}`))
        .flat()
        .sort(),
    );
    for (const c of r1.changes) {
      expect([c.before, c.after, c.stablecoinId]).toEqual([null, "atomic_roundtrip", "pyusd-paypal"]);
      expect(c.pairId).toBe(c.id.replace(/-(\d)$/, (_, l: string) => `-${l === "1" ? 2 : 1}`));
    }
    expect(r1.hoursRecalculated).toBe(hours(0, 1000));

    // the same Idempotency-Key replays the first answer: no second job, the cursor does not move
    const n = await jobCount();
    const again = await post("/api/reclassify-atomic-roundtrips", { "Idempotency-Key": "rt-1" });
    expect(again.headers.get("X-Idempotent-Replay")).toBe("true");
    expect(((await again.json()) as { requestId: string }).requestId).toBe(a.accepted.requestId);
    expect(await jobCount()).toBe(n);

    const b = await runToEnd<Reclassified>("/api/reclassify-atomic-roundtrips");
    const r2 = b.job.result;
    expect([r2.done, r2.groups, r2.updated]).toEqual([true, 1, 2]);
    expect(r2.changes.map((c) => c.id).sort()).toEqual([`ethereum-${txOf(1000)}-1`, `ethereum-${txOf(1000)}-2`]);
    expect(r2.hoursRecalculated).toBe(hours(1000, 1001));
    // done: the next call starts over
    const c = await runToEnd<Reclassified>("/api/reclassify-atomic-roundtrips");
    expect([c.job.result.done, c.job.result.groups]).toEqual([false, 1000]);
  });

  it("backfill-mint-burn-prices: the recorded build values every mint/burn row, so nothing is captured or built", async () => {
    // Every recorded mint/burn coin (USDT, USDP, PYUSD) is USD-pegged at par from the recorded history's first
    // day (USDT CoinGecko chart from 2015-02-25), before their first event (2017-11): no unpriced row.
    const coins = new Set(recordedOnchainRows(CAPTURE_DIR).map((r) => r.stablecoin_id));
    expect([...coins].sort()).toEqual(["pyusd-paypal", "usdp-paxos", "usdt-tether"]);
    const first = csv("bhemen-crypto-insights/coingecko-usdc-usdt/usdt_history.csv")[0].snapped_at.slice(0, 10);
    const events = recordedOnchainRows(CAPTURE_DIR).filter((r) => r.kind === "mint" || r.kind === "burn");
    expect(new Date(Math.min(...events.map((e) => e.ts)) * 1000).toISOString().slice(0, 10) > first).toBe(true);
    const latest = readFileSync(join(dataDir, "latest.json"), "utf8");
    const requests = replay.requests.length;
    const { accepted, job } = await runToEnd<Record<string, unknown>>("/api/backfill-mint-burn-prices", {
      "Idempotency-Key": "mbp-1",
    });
    expect(job.error).toBeNull();
    expect(job.result).toMatchObject({
      totalUpdated: 0,
      rowsValued: 0,
      rowsAudited: 0,
      rowsStillUnpriced: 0,
      rowsStillMissingAudit: 0,
      coins: [],
      buildAfter: null,
      capture: null,
    });
    expect(replay.requests.length).toBe(requests);
    expect(readFileSync(join(dataDir, "latest.json"), "utf8")).toBe(latest);
    const again = await post("/api/backfill-mint-burn-prices", { "Idempotency-Key": "mbp-1" });
    expect(again.headers.get("X-Idempotent-Replay")).toBe("true");
    expect(((await again.json()) as { requestId: string }).requestId).toBe(accepted.requestId);
  });

  it("backfill-mint-burn-prices: unpriced gold mint/burn rows are found, their price history asked of the live client", async () => {
    // PAXG (gold: valued only by a consensus price, which the recorded inputs lack in January 2024) mints
    // written to the ledger, then a build as of the recorded as-of that reads the ledger: these rows are unpriced.
    const paxg = must(
      (
        JSON.parse(readFileSync(join(import.meta.dirname, "../../pipelines/registry/registry.json"), "utf8")) as {
          coins: { id: string; geckoId: string | null; pegCurrency: string }[];
        }
      ).coins.find((c) => c.id === "paxg-paxos"),
      "PAXG in the registry",
    );
    expect(paxg.pegCurrency).toBe("XAU");
    const template = fixtureRows()[0];
    const contract = "0x45804880de22913dafe09f4980848ece6ecbaf78";
    const configKey = `paxg-paxos:ethereum:${contract}:paxos-supply`;
    const days = [1_704_880_800, 1_704_967_200, 1_705_053_600]; // 2024-01-10/11/12 10:00 UTC
    const rows = days.map((ts, i) => ({
      ...template,
      id: `ethereum-${txOf(5000 + i)}-7`,
      stablecoin_id: "paxg-paxos",
      config_key: configKey,
      contract_address: contract,
      decimals: 18,
      amount_raw: "1000000000000000000",
      tx_hash: txOf(5000 + i),
      block_number: 19_000_000 + i,
      log_index: 7,
      ts,
    }));
    const ledger = await LedgerStore.open(ledgerPath);
    try {
      await ledger.commitRange({ configKey, rows, nowSec: days[2] });
    } finally {
      await ledger.close();
    }
    const build = spawnSync(
      process.execPath,
      ["--import", "tsx", "build/cli.ts", "build", "--as-of", new Date(RECORDED_AS_OF * 1000).toISOString()],
      {
        cwd: join(import.meta.dirname, "../.."),
        // scratch in the OS temp dir: the parsed-capture cache the suite's recorded build filled (no second parse)
        env: {
          ...process.env,
          BALLAST_DATA_DIR: dataDir,
          BALLAST_ONCHAIN_LEDGER: ledgerPath,
          BALLAST_SCRATCH_DIR: tmpdir(),
          BALLAST_LOG: "silent",
        },
        encoding: "utf8",
      },
    );
    expect(build.status, build.stderr).toBe(0);
    const requests = replay.requests.length;
    const { job } = await runToEnd<{
      rowsStillUnpriced: number;
      rowsValued: number;
      coins: Record<string, unknown>[];
      capture: { captured: unknown[]; failed: { endpoint: string; params: Record<string, string> }[] };
      buildAfter: string | null;
    }>("/api/backfill-mint-burn-prices");
    expect(job.error).toBeNull();
    expect(job.result).toMatchObject({
      totalUpdated: 0,
      rowsValued: 0,
      rowsAudited: 0,
      rowsStillUnpriced: rows.length,
      rowsStillMissingAudit: rows.length,
      coins: [{ stablecoinId: "paxg-paxos", geckoId: paxg.geckoId, unpriced: rows.length, valued: 0, audited: 0 }],
      buildAfter: null,
    });
    // the replay server holds no recorded PAXG chart: the capture fails, nothing is built or invented
    expect(job.result.capture.captured).toEqual([]);
    expect(job.result.capture.failed.map((f) => [f.endpoint, f.params])).toEqual([
      ["coingecko.market_chart", { id: paxg.geckoId }],
    ]);
    expect(replay.requests.slice(requests)).toContain(`coingecko /api/v3/coins/${paxg.geckoId}/market_chart`);
  });

  it("an on-chain filter that selects no tracked config is 400 naming it, before any job starts", async () => {
    const n = await jobCount();
    for (const [path, param] of [
      ["/api/backfill-blacklist-current-balances?stablecoin=ZZZ", "stablecoin"],
      ["/api/backfill-blacklist-current-balances?stablecoin=USDT&chainId=nochain", "chainId"],
      ["/api/backfill-blacklist-current-balances?chainId=nochain", "chainId"],
      ["/api/remediate-blacklist-amount-gaps?stablecoin=ZZZ", "stablecoin"],
      ["/api/remediate-blacklist-amount-gaps?chainId=nochain", "chainId"],
      ["/api/backfill-mint-burn?configKey=zzz-none:ethereum:0xabc:erc20-supply&fromBlock=1&toBlock=2", "configKey"],
      ["/api/backfill-mint-burn?configKey=not-a-key&fromBlock=1&toBlock=2", "configKey"],
    ] as const) {
      const r = await post(path);
      expect([path, r.status]).toEqual([path, 400]);
      expect((await r.json()).error).toContain(`Invalid parameter ${param}`);
    }
    expect(await jobCount()).toBe(n);
    // a filter that selects a tracked config starts its job (USDP freeze rows: a dry run lists them)
    const ok = await post("/api/remediate-blacklist-amount-gaps?stablecoin=USDP&chainId=ethereum");
    expect(ok.status).toBe(202);
    await expect.poll(jobCount).toBe(n + 1);
  });
});
