import { createServer, type Server } from "node:http";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { syncTronConfig } from "../../pipelines/onchain/ingest-tron.ts";
import { LedgerStore } from "../../pipelines/onchain/ledger-store.ts";
import { trackedConfigs } from "../../pipelines/onchain/tracked.ts";
import { loadRegistry } from "../../pipelines/registry/registry.ts";
import { HttpClient } from "../../pipelines/sources/http-client.ts";
import { must } from "../helpers/must.ts";

// A local TronGrid: `GET /v1/contracts/{address}/events` filtered by event_name and block time,
// ascending, two events per page linked by fingerprint, shaped as TronGrid documents it. Expected
// rows are the events this test serves.
const USDT_TRON = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";
const config = must(
  trackedConfigs(loadRegistry()).find(
    (c) => c.stablecoinId === "usdt-tether" && c.chain === "tron" && c.purpose === "freeze",
  ),
  "the usdt-tether tron freeze config",
);
const VICTIMS = ["704833c02883b3261f7baf62f8cb19b4b0c2e64e", "66426c7ac3d98b29191063833345b6bc540d7278"];

interface Ev {
  name: string;
  tsMs: number;
  tx: string;
  victim: number;
  amount?: string;
}
const events: Ev[] = [];
const add = (name: string, tsMs: number, victim: number, amount?: string) =>
  events.push({ name, tsMs, tx: (events.length + 1).toString(16).padStart(64, "0"), victim, amount });
for (let i = 0; i < 5; i++) add("AddedBlackList", 1_700_000_000_000 + i * 60_000, i % 2);
add("DestroyedBlackFunds", 1_700_000_400_000, 0, "123456789012345678901");
add("RemovedBlackList", 1_700_000_500_000, 1);

let failNext = 0;
let server: Server;
let base = "";
beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "", "http://x");
    if (failNext > 0 && url.searchParams.has("fingerprint")) {
      failNext--;
      res.writeHead(500).end("{}");
      return;
    }
    const name = url.searchParams.get("event_name");
    const min = Number(url.searchParams.get("min_block_timestamp") ?? 0);
    const max = Number(url.searchParams.get("max_block_timestamp") ?? Infinity);
    const matching = events.filter((e) => e.name === name && e.tsMs >= min && e.tsMs <= max);
    const start = Number(url.searchParams.get("fingerprint") ?? 0);
    const page = matching.slice(start, start + 2);
    const data = page.map((e) => ({
      block_number: 50_000_000 + Math.floor((e.tsMs - 1_700_000_000_000) / 3000),
      block_timestamp: e.tsMs,
      contract_address: USDT_TRON,
      caller_contract_address: USDT_TRON,
      event_index: 0,
      event_name: e.name,
      transaction_id: e.tx,
      event:
        e.name === "DestroyedBlackFunds"
          ? "DestroyedBlackFunds(address _blackListedUser, uint256 _balance)"
          : `${e.name}(address _user)`,
      result:
        e.name === "DestroyedBlackFunds"
          ? { _blackListedUser: `0x${VICTIMS[e.victim]}`, _balance: e.amount }
          : { _user: `0x${VICTIMS[e.victim]}` },
      result_type:
        e.name === "DestroyedBlackFunds" ? { _blackListedUser: "address", _balance: "uint256" } : { _user: "address" },
    }));
    const more = start + 2 < matching.length;
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        data,
        success: true,
        meta: { at: Date.now(), page_size: data.length, ...(more ? { fingerprint: String(start + 2) } : {}) },
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const client = () => new HttpClient({ name: "trongrid", baseUrl: base, concurrency: 1, retries: 0, timeoutMs: 2000 });
const run = (ledger: LedgerStore, maxMs: number) =>
  syncTronConfig(ledger, client(), config, { maxBlockTimestampMs: maxMs, minRequestIntervalMs: 0 });

describe("Tron ingestion into the ledger (cursor = block time, ms)", () => {
  it("reads every event once; a failed page keeps the cursor; a rerun completes without duplicates; new events resume from the cursor", async () => {
    const ledger = await LedgerStore.open(join(mkdtempSync(join(tmpdir(), "ballast-tron-")), "onchain.duckdb"));
    try {
      failNext = 1; // the second page of the first stream fails
      const first = await run(ledger, 1_700_000_450_000);
      expect(first.status).toBe("failed");
      const second = await run(ledger, 1_700_000_450_000);
      expect(second.status).toBe("synced");
      let rows = await ledger.events({});
      const inWindow = events.filter((e) => e.tsMs <= 1_700_000_450_000);
      expect(rows.map((r) => r.tx_hash.replace(/^0x/, "")).sort()).toEqual(inWindow.map((e) => e.tx).sort());
      expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
      const destroy = must(
        rows.find((r) => r.kind === "destroy"),
        "the destroy row",
      );
      expect(destroy).toMatchObject({
        amount_raw: "123456789012345678901",
        amount_source: "event",
        amount_status: "resolved",
        chain_id: "tron",
      });
      expect(second.cursorMs).toBe(1_700_000_450_000);
      const third = await run(ledger, 1_700_000_600_000);
      expect(third.status).toBe("synced");
      rows = await ledger.events({});
      expect(rows.map((r) => r.tx_hash.replace(/^0x/, "")).sort()).toEqual(events.map((e) => e.tx).sort());
      expect(must(await ledger.getCursor(config.configKey), "the tron config's cursor").lastBlock).toBe(
        1_700_000_600_000,
      );
    } finally {
      await ledger.close();
    }
  });
});
