import { readFileSync } from "node:fs";
import { join } from "node:path";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import type { BlacklistResponseSchema } from "../../api/queries/blacklist.ts";
import type { MintBurnEventsResponseSchema, MintBurnFlowsResponseSchema } from "../../api/queries/mint-burn.ts";
import type { BlacklistEvent, BlacklistSummarySchema } from "../../site-data/blacklist.ts";
import type { MintBurnEvent } from "../../site-data/mint-burn.ts";
import { CAPTURE_DIR, RECORDED_AS_OF } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";
import { serveRecordedBuild } from "../helpers/served-build.ts";

type BlacklistPage = z.infer<typeof BlacklistResponseSchema>;
type BlacklistSummary = z.infer<typeof BlacklistSummarySchema>;
type MintBurnPage = z.infer<typeof MintBurnEventsResponseSchema>;
/** `/api/mint-burn-flows` with the `_meta` freshness block the route adds. */
type MintBurnFlows = z.infer<typeof MintBurnFlowsResponseSchema> & { _meta?: unknown };
/** The JSON of an error answer. */
type ErrorBody = { error: string };

// Expected values come from the recorded CSVs themselves (counted and summed here with papaparse and
// BigInt), never from the code under test.
const csv = (path: string) =>
  Papa.parse<Record<string, string>>(readFileSync(join(CAPTURE_DIR, path), "utf8"), {
    header: true,
    skipEmptyLines: true,
  }).data;
const usdtCsv = csv("bhemen-usdt/usdt_configs.csv");
const usdpCsv = csv("bhemen-paxos-coins/usdp_configs.csv");
const pyusdCsv = csv("bhemen-crypto-insights/pyusd/pyusd_supply_events.csv");
/** Base units of a CSV cell (the USDT archive writes integers as `123.0`). */
const units = (v: string) => BigInt(v.replace(/\.0$/, ""));
const sumUnits = (rows: Record<string, string>[], col: string) => rows.reduce((s, r) => s + units(r[col]), 0n);
/** The USDT and USDP archives' ISO timestamps are UTC without a zone (shared/data MANIFEST). */
const utcSec = (iso: string) => Date.parse(`${iso}Z`) / 1000;
/** Token units of a base-unit integer as a JS number (via the exact decimal string). */
const tokenUnits = (raw: bigint, decimals: number) =>
  Number(`${raw / 10n ** BigInt(decimals)}.${(raw % 10n ** BigInt(decimals)).toString().padStart(decimals, "0")}`);
const FREEZE_NAMES = new Set(["AddedBlackList", "RemovedBlackList", "DestroyedBlackFunds"]);
const usdtFreezeRows = usdtCsv.filter((r) => FREEZE_NAMES.has(r.event_name));
const usdtDestroyedRaw = sumUnits(
  usdtCsv.filter((r) => r.event_name === "DestroyedBlackFunds"),
  "_balance",
);
/** PYUSD rows the default build knows: block time at or before its as-of (one recorded row has no timestamp). */
const pyusdKnown = pyusdCsv.filter((r) => r.timestamp !== "" && Number(r.timestamp) <= RECORDED_AS_OF);

/**
 * Frozen records still active at the end of the recorded logs, replayed from the CSVs per coin and
 * address in block order: a freeze opens one, a destroy (wipe) marks it destroyed, an unfreeze closes it.
 */
function activeFrozenFromCsv(): Record<string, number> {
  const steps = [
    ...usdtCsv
      .filter((r) => FREEZE_NAMES.has(r.event_name))
      .map((r) => ({
        coin: "USDT",
        block: Number(r.block_number),
        log: Number(r.log_index),
        address: (r._user || r._blackListedUser).toLowerCase(),
        op: r.event_name === "AddedBlackList" ? "freeze" : r.event_name === "RemovedBlackList" ? "unfreeze" : "destroy",
      })),
    ...usdpCsv
      .filter((r) => ["AddressFrozen", "AddressUnfrozen", "FrozenAddressWiped"].includes(r.event_name))
      .map((r) => ({
        coin: "USDP",
        block: Number(r.block_number),
        log: Number(r.log_index),
        address: r.addr.toLowerCase(),
        op: r.event_name === "AddressFrozen" ? "freeze" : r.event_name === "AddressUnfrozen" ? "unfreeze" : "destroy",
      })),
  ].sort((a, b) => a.block - b.block || a.log - b.log);
  const records = new Map<string, { coin: string; destroyed: boolean }>();
  for (const s of steps) {
    const key = `${s.coin}|${s.address}`;
    if (s.op === "freeze") records.set(key, { coin: s.coin, destroyed: false });
    else if (s.op === "unfreeze") records.delete(key);
    else {
      const r = records.get(key);
      if (r) r.destroyed = true;
    }
  }
  const perCoin: Record<string, number> = {};
  for (const r of records.values()) if (!r.destroyed) perCoin[r.coin] = (perCoin[r.coin] ?? 0) + 1;
  return perCoin;
}

/** Every event of one coin from /api/mint-burn-events, following the keyset cursor. */
async function allMintBurnEvents(stablecoin: string): Promise<MintBurnEvent[]> {
  const out: MintBurnEvent[] = [];
  let cursor: string | null = null;
  do {
    const page: MintBurnPage = (
      await get<MintBurnPage>(
        `/api/mint-burn-events?stablecoin=${stablecoin}&limit=1000${cursor ? `&cursor=${cursor}` : ""}`,
      )
    ).body;
    out.push(...page.events);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

let served: Awaited<ReturnType<typeof serveRecordedBuild>>;
/** GET `path` with the served build's key; `T` is the JSON body the test expects. */
const get = <T = unknown>(path: string) => served.get<T>(path);

beforeAll(async () => {
  served = await serveRecordedBuild("ballast-onchain-", "ballast_onchain");
});
afterAll(async () => {
  await served?.close();
});

describe("/api/blacklist on the recorded build", () => {
  it("USDT totals every recorded freeze-family event (1,480), each once", async () => {
    expect(usdtFreezeRows.length).toBe(1480);
    const { status, body } = await get<BlacklistPage>("/api/blacklist?stablecoin=USDT&includeTotal=true");
    expect(status).toBe(200);
    expect(body).toMatchObject({ total: 1480, totalExact: true });
    expect(body.events).toHaveLength(1000);
    const ids = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: BlacklistPage = (
        await get<BlacklistPage>(`/api/blacklist?stablecoin=USDT&limit=400${cursor ? `&cursor=${cursor}` : ""}`)
      ).body;
      for (const e of page.events) ids.add(e.id);
      cursor = page.nextCursor;
    } while (cursor);
    expect(ids.size).toBe(1480);
    const expectedIds = new Set(usdtFreezeRows.map((r) => `ethereum-${r.txhash.toLowerCase()}-${r.log_index}`));
    expect([...ids].filter((id) => !expectedIds.has(id))).toEqual([]);
  });

  it("every sort order pages every event exactly once in order, both directions; a cursor is valid for every sort", async () => {
    const all = (await get<BlacklistPage>("/api/blacklist?includeTotal=true&limit=1000")).body;
    for (const sortBy of ["date", "stablecoin", "chain", "event"]) {
      for (const dir of ["asc", "desc"]) {
        const seen: BlacklistEvent[] = [];
        let cursor: string | null = null;
        do {
          const page: BlacklistPage = (
            await get<BlacklistPage>(
              `/api/blacklist?sortBy=${sortBy}&sortDirection=${dir}&limit=250${cursor ? `&cursor=${cursor}` : ""}`,
            )
          ).body;
          seen.push(...page.events);
          cursor = page.nextCursor;
        } while (cursor);
        expect(seen.length).toBe(all.total);
        expect(new Set(seen.map((e) => e.id)).size).toBe(all.total);
        const fields: Record<string, "timestamp" | "stablecoin" | "chainName" | "eventType"> = {
          date: "timestamp",
          stablecoin: "stablecoin",
          chain: "chainName",
          event: "eventType",
        };
        const field = must(fields[sortBy], `the event field of sortBy=${sortBy}`);
        for (let i = 1; i < seen.length; i++) {
          const a = seen[i - 1][field],
            b = seen[i][field];
          if (dir === "asc") expect(a <= b).toBe(true);
          else expect(a >= b).toBe(true);
        }
      }
    }
    // spec 4.2: a cursor is valid for every sort — used with another order it continues after the same event there
    const first = (await get<BlacklistPage>("/api/blacklist?sortBy=date&limit=5")).body;
    const anchor = must(first.events.at(-1), "the last event of the first page").id;
    const byEvent = [
      ...(await get<BlacklistPage>("/api/blacklist?sortBy=event&sortDirection=asc&limit=1000")).body.events,
      ...(await get<BlacklistPage>("/api/blacklist?sortBy=event&sortDirection=asc&limit=1000&offset=1000")).body.events,
    ].map((e) => e.id);
    expect(byEvent.indexOf(anchor)).toBeGreaterThanOrEqual(0);
    const next = (
      await get<BlacklistPage>(`/api/blacklist?sortBy=event&sortDirection=asc&limit=3&cursor=${first.nextCursor}`)
    ).body.events.map((e) => e.id);
    expect(next).toEqual(byEvent.slice(byEvent.indexOf(anchor) + 1, byEvent.indexOf(anchor) + 4));
    expect((await get("/api/blacklist?cursor=bm90LWEtY3Vyc29y")).status).toBe(400);
  });

  it("parameters of spec 4.2: filters, limit 0 → 1000, offset bounds, chain vs chainId, symbol not id", async () => {
    const destroys = (await get<BlacklistPage>("/api/blacklist?eventType=destroy&includeTotal=true&limit=0")).body;
    expect(destroys.total).toBe(usdtCsv.filter((r) => r.event_name === "DestroyedBlackFunds").length + 1); // + the USDP wipe
    expect(destroys.events.length).toBe(Math.min(1000, destroys.total));
    expect(destroys.events.every((e) => e.eventType === "destroy")).toBe(true);
    const addr = usdtFreezeRows[0]._user || usdtFreezeRows[0]._blackListedUser;
    const byQ = (await get<BlacklistPage>(`/api/blacklist?q=${addr.slice(2, 14).toUpperCase()}&includeTotal=true`))
      .body;
    expect(byQ.events.length).toBeGreaterThan(0);
    expect(byQ.events.every((e) => e.address.includes(addr.slice(2, 14).toLowerCase()))).toBe(true);
    expect((await get("/api/blacklist?chain=Ethereum&chainId=ethereum&limit=1")).status).toBe(200);
    const mismatch = await get<ErrorBody>("/api/blacklist?chain=Ethereum&chainId=tron");
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toMatch(/^Invalid parameter chainId/);
    expect((await get<ErrorBody>("/api/blacklist?stablecoin=usdt-tether")).body.error).toMatch(
      /^Invalid parameter stablecoin/,
    );
    expect(await get<BlacklistPage>("/api/blacklist?chain=Atlantis")).toMatchObject({
      status: 200,
      body: { events: [], nextCursor: null },
    });
    expect(await get<BlacklistPage>("/api/blacklist?chainId=atlantis")).toMatchObject({
      status: 200,
      body: { events: [] },
    });
    expect((await get("/api/blacklist?offset=25001")).status).toBe(400);
    expect((await get("/api/blacklist?limit=1001")).status).toBe(400);
    const p = (await get<BlacklistPage>("/api/blacklist?limit=3")).body;
    expect((await get(`/api/blacklist?offset=3&cursor=${p.nextCursor}`)).status).toBe(400);
    const byOffset = (await get<BlacklistPage>("/api/blacklist?limit=3&offset=3")).body;
    const byCursor = (await get<BlacklistPage>(`/api/blacklist?limit=3&cursor=${p.nextCursor}`)).body;
    expect(byOffset.events.map((e) => e.id)).toEqual(byCursor.events.map((e) => e.id));
    expect((await get("/api/blacklist?sortBy=amount")).status).toBe(400);
  });

  it("summary: USDT destroyed total is exact (176,213,018.853435), destroys link to their freezes", async () => {
    expect(usdtDestroyedRaw).toBe(176213018853435n);
    const { status, body } = await get<BlacklistSummary>("/api/blacklist-summary");
    expect(status).toBe(200);
    expect(body.stats.perCoinDestroyedTotalExact.USDT).toBe("176213018.853435");
    expect(body.stats.perCoinDestroyedTotalNative.USDT).toBe(176213018.853435);
    expect(body.stats.perCoinTotalEvents.USDT).toBe(1480);
    expect(body.reconciliation.destroyedRawAmounts.USDT).toBe(usdtDestroyedRaw.toString());
    const quarters = body.stats.perCoinQuarterlyEventTypes.USDT;
    expect(quarters[0].quarter).toBe("2017-Q4");
    expect(quarters.reduce((s, q) => s + q.blacklist + q.unblacklist + q.destroy, 0)).toBe(1480);
    // the USDP wipe carries no amount; it is derived from the same transaction's SupplyDecreased
    const wipe = (await get<BlacklistPage>("/api/blacklist?stablecoin=USDP&eventType=destroy")).body.events[0];
    expect(wipe).toMatchObject({
      amountSource: "derived",
      amountStatus: "resolved",
      amountRaw: "3972017929316571041737574",
    });
    expect(wipe.linkedFreezeEventId).toMatch(/^ethereum-0x/);
    const freeze = (await get<BlacklistPage>(`/api/blacklist?stablecoin=USDP&eventType=blacklist&q=${wipe.address}`))
      .body.events[0];
    expect(wipe.frozenDurationSec).toBe(wipe.timestamp - freeze.timestamp);
    // freezes without an amount are gaps (null), never zero
    const added = (await get<BlacklistPage>("/api/blacklist?stablecoin=USDT&eventType=blacklist&limit=5")).body.events;
    expect(added.every((e) => e.amountNative === null && e.amountStatus === "recoverable_pending")).toBe(true);
  });
});

describe("/api/blacklist-summary totals: units named, unknown terms make a total null", () => {
  it("frozen totals are null with the count of unknown amounts beside them (recomputed from the CSVs)", async () => {
    const active = activeFrozenFromCsv();
    const activeCount = Object.values(active).reduce((a, b) => a + b, 0);
    expect(activeCount).toBe(261); // the issue's measured count, here replayed from the raw logs
    const { stats } = (await get<BlacklistSummary>("/api/blacklist-summary")).body;
    expect(stats.activeAddressCount).toBe(activeCount);
    expect(stats.perCoinFrozenAddressCount).toEqual(active);
    // neither USDT AddedBlackList nor USDP AddressFrozen carries an amount: every active term is unknown
    expect(
      usdtCsv.filter((r) => r.event_name === "AddedBlackList").every((r) => r.amount === "" && r._balance === ""),
    ).toBe(true);
    expect(stats.activeFrozenTotal).toBeNull();
    expect(stats.activeAmountGapCount).toBe(activeCount);
    expect(stats.trackedFrozenTotal).toBeNull();
    expect(stats.trackedAmountGapCount).toBe(activeCount);
    expect(stats.perCoinFrozenTotal).toEqual(Object.fromEntries(Object.keys(active).map((c) => [c, null])));
    expect(stats.perCoinFrozenTotalNative).toEqual(Object.fromEntries(Object.keys(active).map((c) => [c, null])));
    expect(stats.perCoinFrozenAmountGapCount).toEqual(active);
  });

  it("usdtBlacklisted counts active freeze records; usdtAddressesOnBlacklist counts addresses still on the list (780)", async () => {
    // On the on-chain list at as-of: per address, AddedBlackList minus RemovedBlackList in block order
    // (DestroyedBlackFunds burns the balance but leaves the address listed).
    const listed = new Map<string, boolean>();
    for (const r of usdtCsv
      .filter((r) => r.event_name === "AddedBlackList" || r.event_name === "RemovedBlackList")
      .filter((r) => utcSec(r.timestamp) <= RECORDED_AS_OF)
      .sort((a, b) => Number(a.block_number) - Number(b.block_number) || Number(a.log_index) - Number(b.log_index)))
      listed.set(r._user.toLowerCase(), r.event_name === "AddedBlackList");
    const onList = [...listed.values()].filter(Boolean).length;
    expect(onList).toBe(780); // the issue's count, here replayed from the raw log
    const { stats } = (await get<BlacklistSummary>("/api/blacklist-summary")).body;
    expect(stats.usdtAddressesOnBlacklist).toBe(onList);
    expect(stats.usdtBlacklisted).toBe(activeFrozenFromCsv().USDT);
    expect(stats.usdtBlacklisted).toBe(260);
  });

  it("destroyed totals: USD (1 x units for these USD pegs) beside exact token units, no gaps", async () => {
    const wipe = must(
      usdpCsv.find((r) => r.event_name === "FrozenAddressWiped"),
      "the FrozenAddressWiped row of the USDP CSV",
    );
    // the wipe's amount is the SupplyDecreased of its transaction (the log itself carries none)
    const wipeBurns = usdpCsv.filter((r) => r.event_name === "SupplyDecreased" && r.txhash === wipe.txhash);
    expect(wipeBurns).toHaveLength(1);
    const usdpWipedRaw = units(wipeBurns[0].value);
    const { stats, reconciliation } = (await get<BlacklistSummary>("/api/blacklist-summary")).body;
    expect(stats.destroyedAmountGapCount).toBe(0);
    expect(stats.perCoinDestroyedAmountGapCount).toEqual({ USDP: 0, USDT: 0 });
    expect(stats.perCoinDestroyedTotal.USDT).toBeCloseTo(tokenUnits(usdtDestroyedRaw, 6), 4);
    expect(stats.perCoinDestroyedTotal.USDP).toBeCloseTo(tokenUnits(usdpWipedRaw, 18), 4);
    expect(stats.perCoinDestroyedTotalNative).toEqual({
      USDP: tokenUnits(usdpWipedRaw, 18),
      USDT: tokenUnits(usdtDestroyedRaw, 6),
    });
    expect(stats.destroyedTotal).toBeCloseTo(tokenUnits(usdtDestroyedRaw, 6) + tokenUnits(usdpWipedRaw, 18), 4);
    expect(reconciliation.destroyedRawAmounts).toEqual({
      USDP: usdpWipedRaw.toString(),
      USDT: usdtDestroyedRaw.toString(),
    });
    const destroys = (await get<BlacklistPage>("/api/blacklist?eventType=destroy&limit=1000")).body.events;
    expect(destroys.length).toBeGreaterThan(0);
    for (const e of destroys) expect(e.amountUsdAtEvent).toBe(e.amountNative);
  });
});

describe("mint/burn routes on the recorded build", () => {
  it("events of one coin, with flow classification; unknown id 404; stablecoin required", async () => {
    const usdt = (await get<MintBurnPage>("/api/mint-burn-events?stablecoin=usdt-tether&includeTotal=true&limit=1000"))
      .body;
    expect(usdt.total).toBe(usdtCsv.filter((r) => r.event_name === "Issue" || r.event_name === "Redeem").length);
    expect((await get("/api/mint-burn-events?stablecoin=nope-nobody")).status).toBe(404);
    expect((await get("/api/mint-burn-events")).status).toBe(400);
    const wipeBurn = (await get<MintBurnPage>("/api/mint-burn-events?stablecoin=usdp-paxos&scope=enforcement")).body
      .events;
    expect(wipeBurn).toHaveLength(1);
    expect(wipeBurn[0]).toMatchObject({ direction: "burn", flowType: "frozen_funds", burnType: "frozen_funds" });
  });

  it("native sums exact: every coin's minted and burned base units equal the raw CSV sums", async () => {
    const cases = [
      { id: "usdt-tether", rows: usdtCsv, mint: "Issue", burn: "Redeem", col: "amount" },
      { id: "usdp-paxos", rows: usdpCsv, mint: "SupplyIncreased", burn: "SupplyDecreased", col: "value" },
      {
        id: "pyusd-paypal",
        rows: pyusdKnown.map((r) => ({ ...r, event_name: r.event })),
        mint: "SupplyIncreased",
        burn: "SupplyDecreased",
        col: "value",
      },
    ];
    for (const c of cases) {
      const mints = c.rows.filter((r) => r.event_name === c.mint),
        burns = c.rows.filter((r) => r.event_name === c.burn);
      expect(mints.length, c.id).toBeGreaterThan(0);
      expect(burns.length, c.id).toBeGreaterThan(0);
      const events = await allMintBurnEvents(c.id);
      expect(events.length, c.id).toBe(mints.length + burns.length);
      const sum = (dir: string) =>
        events
          .filter((e) => e.direction === dir)
          .reduce((s, e) => s + BigInt(must(e.amountRaw, `${e.id} amountRaw`)), 0n);
      expect(sum("mint"), c.id).toBe(sumUnits(mints, c.col));
      expect(sum("burn"), c.id).toBe(sumUnits(burns, c.col));
    }
  });

  it("USD = token units x 1 for every USD-pegged event (PYUSD checked against the raw CSV value / 1e6)", async () => {
    const events = await allMintBurnEvents("pyusd-paypal");
    expect(events).toHaveLength(pyusdKnown.length);
    // one CSV row per event: same transaction, direction and raw value (the CSV has no log index)
    const expected = new Map<string, number[]>();
    for (const r of pyusdKnown) {
      const k = `0x${r.transactionHash}|${r.event === "SupplyIncreased" ? "mint" : "burn"}|${r.value}`;
      expected.set(k, [...(expected.get(k) ?? []), Number(r.value) / 1e6]);
    }
    for (const e of events) {
      const k = `${e.txHash}|${e.direction}|${e.amountRaw}`;
      const usd = expected.get(k)?.pop();
      expect(usd, k).toBeDefined();
      expect(e).toMatchObject({ amountUsd: usd, priceUsd: 1, valuationBasis: "par" });
    }
    for (const id of ["usdt-tether", "usdp-paxos"]) {
      const other = await allMintBurnEvents(id);
      expect(other.length).toBeGreaterThan(0);
      for (const e of other)
        expect(e, id).toMatchObject({ amountUsd: e.amountNative, priceUsd: 1, valuationBasis: "par" });
    }
  });

  it("flows: windowed sums and counts equal the CSV's events of the window; USD = units x 1", async () => {
    const { status, body } = await get<MintBurnFlows>("/api/mint-burn-flows?stablecoin=pyusd-paypal&hours=720");
    expect(status).toBe(200);
    expect(body._meta).toBeDefined();
    const end = Math.ceil(RECORDED_AS_OF / 3600) * 3600;
    expect(body.windowEnd).toBe(end);
    const inWindow = pyusdKnown.filter((r) => Number(r.timestamp) >= end - 720 * 3600 && Number(r.timestamp) < end);
    const mints = inWindow.filter((r) => r.event === "SupplyIncreased"),
      burns = inWindow.filter((r) => r.event === "SupplyDecreased");
    expect(mints.length + burns.length).toBeGreaterThan(0);
    // no burn of the window follows a mint to the same address within 24 h and 0.5%: nothing is a round trip
    const roundTrip = burns.some((b) =>
      mints.some(
        (m) =>
          m.to.toLowerCase() === b.from.toLowerCase() &&
          Number(b.blockNumber) > Number(m.blockNumber) &&
          Number(b.timestamp) - Number(m.timestamp) <= 86400 &&
          Math.abs(Number(units(m.value) - units(b.value))) <= 0.005 * Math.max(Number(m.value), Number(b.value)),
      ),
    );
    expect(roundTrip).toBe(false);
    const c = body.coins[0];
    expect(c).toMatchObject({
      stablecoinId: "pyusd-paypal",
      mintCount: mints.length,
      burnCount: burns.length,
      completeness: "complete",
      unpricedMintEventCount: 0,
      unpricedBurnEventCount: 0,
      excludedEventCounts: { atomic_roundtrip: 0, fast_roundtrip: 0, bridge_transfer: 0, frozen_funds: 0 },
    });
    const minted = tokenUnits(sumUnits(mints, "value"), 6),
      burned = tokenUnits(sumUnits(burns, "value"), 6);
    expect(c.mintedNative).toBeCloseTo(minted, 4);
    expect(c.burnedNative).toBeCloseTo(burned, 4);
    expect(c.mintedUsd).toBeCloseTo(minted, 4);
    expect(c.burnedUsd).toBeCloseTo(burned, 4);
    expect(c.netFlowUsd).toBeCloseTo(minted - burned, 4);
    expect((await get("/api/mint-burn-flows?hours=0")).status).toBe(400);
    expect((await get("/api/mint-burn-flows?stablecoin=zzz-none")).status).toBe(404);
  });

  it("excludedEventCounts count only the window: hours=1 has no event; a year holds the round trips of that year", async () => {
    const end = Math.ceil(RECORDED_AS_OF / 3600) * 3600;
    const hour = (await get<MintBurnFlows>("/api/mint-burn-flows?hours=1")).body;
    expect(hour.coins.map((c) => c.stablecoinId)).toEqual(
      expect.arrayContaining(["pyusd-paypal", "usdp-paxos", "usdt-tether"]),
    );
    const csvInLastHour = [
      ...pyusdKnown.filter((r) => Number(r.timestamp) >= end - 3600),
      ...[...usdtCsv, ...usdpCsv].filter((r) => r.timestamp && utcSec(r.timestamp) >= end - 3600),
    ];
    expect(csvInLastHour).toHaveLength(0);
    for (const c of hour.coins) {
      expect(c.mintCount + c.burnCount, c.stablecoinId).toBe(0);
      expect(c.excludedEventCounts, c.stablecoinId).toEqual({
        atomic_roundtrip: 0,
        fast_roundtrip: 0,
        bridge_transfer: 0,
        frozen_funds: 0,
      });
      expect(c.valuation.netFlow7dBound, c.stablecoinId).toBeNull();
    }
    // USDP's log ends 2022-11 (the last CSV row): a window of the year before 2025-09-07 holds nothing of it
    expect(Math.max(...usdpCsv.map((r) => utcSec(r.timestamp)))).toBeLessThan(end - 8760 * 3600);
    const year = (await get<MintBurnFlows>("/api/mint-burn-flows?hours=8760")).body;
    const usdp = year.coins.find((c) => c.stablecoinId === "usdp-paxos");
    expect(usdp).toMatchObject({
      mintCount: 0,
      burnCount: 0,
      excludedEventCounts: { atomic_roundtrip: 0, fast_roundtrip: 0, bridge_transfer: 0, frozen_funds: 0 },
    });
    // PYUSD: standard + excluded events of the year = the CSV's events of the year; excluded ones are the ledger's non-standard events of the year
    const pyusd = must(
      year.coins.find((c) => c.stablecoinId === "pyusd-paypal"),
      "pyusd-paypal in the year's flows",
    );
    const csvYear = pyusdKnown.filter((r) => Number(r.timestamp) >= end - 8760 * 3600 && Number(r.timestamp) < end);
    const excluded = Object.values(pyusd.excludedEventCounts as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(pyusd.mintCount + pyusd.burnCount + excluded).toBe(csvYear.length);
    const ledgerYear = (await allMintBurnEvents("pyusd-paypal")).filter(
      (e) => e.timestamp >= end - 8760 * 3600 && e.flowType !== "standard",
    );
    expect(ledgerYear.length).toBeGreaterThan(0);
    expect(pyusd.excludedEventCounts.fast_roundtrip).toBe(
      ledgerYear.filter((e) => e.flowType === "fast_roundtrip").length,
    );
    const allTime = (await allMintBurnEvents("pyusd-paypal")).filter((e) => e.flowType !== "standard").length;
    expect(excluded).toBeLessThan(allTime);
  });
});
