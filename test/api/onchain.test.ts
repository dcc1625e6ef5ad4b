import { readFileSync } from "node:fs";
import { join } from "node:path";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAPTURE_DIR } from "../helpers/build-once.ts";
import { serveRecordedBuild } from "../helpers/served-build.ts";

// Expected values come from the recorded CSVs themselves (counted and summed here with papaparse and
// BigInt), never from the code under test.
const usdtCsv = Papa.parse<Record<string, string>>(readFileSync(join(CAPTURE_DIR, "bhemen-usdt/usdt_configs.csv"), "utf8"), { header: true, skipEmptyLines: true }).data;
const FREEZE_NAMES = new Set(["AddedBlackList", "RemovedBlackList", "DestroyedBlackFunds"]);
const usdtFreezeRows = usdtCsv.filter((r) => FREEZE_NAMES.has(r.event_name));
const usdtDestroyedRaw = usdtCsv.filter((r) => r.event_name === "DestroyedBlackFunds").reduce((s, r) => s + BigInt(r._balance.replace(/\.0$/, "")), 0n);

let served: Awaited<ReturnType<typeof serveRecordedBuild>>;
let get: (path: string) => Promise<{ status: number; body: any }>;

beforeAll(async () => {
  served = await serveRecordedBuild("ballast-onchain-", "ballast_onchain");
  get = (path) => served.get(path);
});
afterAll(async () => {
  await served?.close();
});

describe("/api/blacklist on the recorded build", () => {
  it("USDT totals every recorded freeze-family event (1,480), each once", async () => {
    expect(usdtFreezeRows.length).toBe(1480);
    const { status, body } = await get("/api/blacklist?stablecoin=USDT&includeTotal=true");
    expect(status).toBe(200);
    expect(body).toMatchObject({ total: 1480, totalExact: true });
    expect(body.events).toHaveLength(1000);
    const ids = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: any = (await get(`/api/blacklist?stablecoin=USDT&limit=400${cursor ? `&cursor=${cursor}` : ""}`)).body;
      for (const e of page.events) ids.add(e.id);
      cursor = page.nextCursor;
    } while (cursor);
    expect(ids.size).toBe(1480);
    const expectedIds = new Set(usdtFreezeRows.map((r) => `ethereum-${r.txhash.toLowerCase()}-${r.log_index}`));
    expect([...ids].filter((id) => !expectedIds.has(id))).toEqual([]);
  });

  it("every sort order pages every event exactly once in order, both directions; a cursor is valid for every sort", async () => {
    const all = (await get("/api/blacklist?includeTotal=true&limit=1000")).body;
    for (const sortBy of ["date", "stablecoin", "chain", "event"]) {
      for (const dir of ["asc", "desc"]) {
        const seen: any[] = [];
        let cursor: string | null = null;
        do {
          const page: any = (await get(`/api/blacklist?sortBy=${sortBy}&sortDirection=${dir}&limit=250${cursor ? `&cursor=${cursor}` : ""}`)).body;
          seen.push(...page.events);
          cursor = page.nextCursor;
        } while (cursor);
        expect(seen.length).toBe(all.total);
        expect(new Set(seen.map((e) => e.id)).size).toBe(all.total);
        const field = { date: "timestamp", stablecoin: "stablecoin", chain: "chainName", event: "eventType" }[sortBy]!;
        for (let i = 1; i < seen.length; i++) {
          const a = seen[i - 1][field], b = seen[i][field];
          if (dir === "asc") expect(a <= b).toBe(true);
          else expect(a >= b).toBe(true);
        }
      }
    }
    // spec 4.2: a cursor is valid for every sort — used with another order it continues after the same event there
    const first = (await get("/api/blacklist?sortBy=date&limit=5")).body;
    const anchor = first.events.at(-1).id;
    const byEvent = [...(await get("/api/blacklist?sortBy=event&sortDirection=asc&limit=1000")).body.events, ...(await get("/api/blacklist?sortBy=event&sortDirection=asc&limit=1000&offset=1000")).body.events].map((e: any) => e.id);
    expect(byEvent.indexOf(anchor)).toBeGreaterThanOrEqual(0);
    const next = (await get(`/api/blacklist?sortBy=event&sortDirection=asc&limit=3&cursor=${first.nextCursor}`)).body.events.map((e: any) => e.id);
    expect(next).toEqual(byEvent.slice(byEvent.indexOf(anchor) + 1, byEvent.indexOf(anchor) + 4));
    expect((await get("/api/blacklist?cursor=bm90LWEtY3Vyc29y")).status).toBe(400);
  });

  it("parameters of spec 4.2: filters, limit 0 → 1000, offset bounds, chain vs chainId, symbol not id", async () => {
    const destroys = (await get("/api/blacklist?eventType=destroy&includeTotal=true&limit=0")).body;
    expect(destroys.total).toBe(usdtCsv.filter((r) => r.event_name === "DestroyedBlackFunds").length + 1); // + the USDP wipe
    expect(destroys.events.length).toBe(Math.min(1000, destroys.total));
    expect(destroys.events.every((e: any) => e.eventType === "destroy")).toBe(true);
    const addr = usdtFreezeRows[0]._user || usdtFreezeRows[0]._blackListedUser;
    const byQ = (await get(`/api/blacklist?q=${addr.slice(2, 14).toUpperCase()}&includeTotal=true`)).body;
    expect(byQ.events.length).toBeGreaterThan(0);
    expect(byQ.events.every((e: any) => e.address.includes(addr.slice(2, 14).toLowerCase()))).toBe(true);
    expect((await get("/api/blacklist?chain=Ethereum&chainId=ethereum&limit=1")).status).toBe(200);
    const mismatch = await get("/api/blacklist?chain=Ethereum&chainId=tron");
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toMatch(/^Invalid parameter chainId/);
    expect((await get("/api/blacklist?stablecoin=usdt-tether")).body.error).toMatch(/^Invalid parameter stablecoin/);
    expect(await get("/api/blacklist?chain=Atlantis")).toMatchObject({ status: 200, body: { events: [], nextCursor: null } });
    expect(await get("/api/blacklist?chainId=atlantis")).toMatchObject({ status: 200, body: { events: [] } });
    expect((await get("/api/blacklist?offset=25001")).status).toBe(400);
    expect((await get("/api/blacklist?limit=1001")).status).toBe(400);
    const p = (await get("/api/blacklist?limit=3")).body;
    expect((await get(`/api/blacklist?offset=3&cursor=${p.nextCursor}`)).status).toBe(400);
    const byOffset = (await get("/api/blacklist?limit=3&offset=3")).body;
    const byCursor = (await get(`/api/blacklist?limit=3&cursor=${p.nextCursor}`)).body;
    expect(byOffset.events.map((e: any) => e.id)).toEqual(byCursor.events.map((e: any) => e.id));
    expect((await get("/api/blacklist?sortBy=amount")).status).toBe(400);
  });

  it("summary: USDT destroyed total is exact (176,213,018.853435), destroys link to their freezes", async () => {
    expect(usdtDestroyedRaw).toBe(176213018853435n);
    const { status, body } = await get("/api/blacklist-summary");
    expect(status).toBe(200);
    expect(body.stats.perCoinDestroyedTotalExact.USDT).toBe("176213018.853435");
    expect(body.stats.perCoinDestroyedTotal.USDT).toBe(176213018.853435);
    expect(body.stats.perCoinTotalEvents.USDT).toBe(1480);
    expect(body.reconciliation.destroyedRawAmounts.USDT).toBe(usdtDestroyedRaw.toString());
    const quarters = body.stats.perCoinQuarterlyEventTypes.USDT;
    expect(quarters[0].quarter).toBe("2017-Q4");
    expect(quarters.reduce((s: number, q: any) => s + q.blacklist + q.unblacklist + q.destroy, 0)).toBe(1480);
    // the USDP wipe carries no amount; it is derived from the same transaction's SupplyDecreased
    const wipe = (await get("/api/blacklist?stablecoin=USDP&eventType=destroy")).body.events[0];
    expect(wipe).toMatchObject({ amountSource: "derived", amountStatus: "resolved", amountRaw: "3972017929316571041737574" });
    expect(wipe.linkedFreezeEventId).toMatch(/^ethereum-0x/);
    const freeze = (await get(`/api/blacklist?stablecoin=USDP&eventType=blacklist&q=${wipe.address}`)).body.events[0];
    expect(wipe.frozenDurationSec).toBe(wipe.timestamp - freeze.timestamp);
    // freezes without an amount are gaps (null), never zero
    const added = (await get("/api/blacklist?stablecoin=USDT&eventType=blacklist&limit=5")).body.events;
    expect(added.every((e: any) => e.amountNative === null && e.amountStatus === "recoverable_pending")).toBe(true);
  });
});

describe("mint/burn routes on the recorded build", () => {
  it("events of one coin, with flow classification; unknown id 404; stablecoin required", async () => {
    const usdt = (await get("/api/mint-burn-events?stablecoin=usdt-tether&includeTotal=true&limit=1000")).body;
    expect(usdt.total).toBe(usdtCsv.filter((r) => r.event_name === "Issue" || r.event_name === "Redeem").length);
    const issuedRaw = usdtCsv.filter((r) => r.event_name === "Issue").reduce((s, r) => s + BigInt(r.amount.replace(/\.0$/, "")), 0n);
    expect(usdt.events.filter((e: any) => e.direction === "mint").reduce((s: bigint, e: any) => s + BigInt(e.amountRaw), 0n)).toBe(issuedRaw);
    expect((await get("/api/mint-burn-events?stablecoin=nope-nobody")).status).toBe(404);
    expect((await get("/api/mint-burn-events")).status).toBe(400);
    const wipeBurn = (await get("/api/mint-burn-events?stablecoin=usdp-paxos&scope=enforcement")).body.events;
    expect(wipeBurn).toHaveLength(1);
    expect(wipeBurn[0]).toMatchObject({ direction: "burn", flowType: "frozen_funds", burnType: "frozen_funds" });
  });

  it("flows: USD null (never zero) when unpriced, native sums exact, bounded windows", async () => {
    const { status, body } = await get("/api/mint-burn-flows?stablecoin=pyusd-paypal&hours=720");
    expect(status).toBe(200);
    const c = body.coins[0];
    expect(c.stablecoinId).toBe("pyusd-paypal");
    expect(c.mintCount + c.burnCount).toBeGreaterThan(0);
    expect(c.netFlowUsd).toBeNull();
    expect(c.completeness).toBe("unpriced");
    expect(body._meta).toBeDefined();
    expect((await get("/api/mint-burn-flows?hours=0")).status).toBe(400);
    expect((await get("/api/mint-burn-flows?stablecoin=zzz-none")).status).toBe(404);
  });
});
