import { describe, expect, it } from "vitest";
import { queryMintBurnFlows } from "../../api/queries/mint-burn.ts";
import { type BlacklistEvent, BlacklistSummarySchema, blacklistSummary } from "../../site-data/blacklist.ts";
import type { FlowHour, MintBurnHourly } from "../../site-data/mint-burn.ts";

// Totals over amounts some of which are unknown, and windowed counts. Expected values worked by hand.

const T0 = Date.parse("2025-01-01T00:00:00Z") / 1000;
let n = 0;
/** One freeze-ledger event; `raw` base units (null: unknown) of a `decimals` contract, `usd` its USD value. */
function ev(
  stablecoin: string,
  chainId: string,
  eventType: BlacklistEvent["eventType"],
  address: string,
  raw: string | null,
  decimals: number,
  usd: number | null,
  linked: string | null = null,
): BlacklistEvent {
  const i = n++;
  return {
    id: `${chainId}-0x${i.toString(16).padStart(64, "0")}-0`,
    stablecoin,
    stablecoinId: stablecoin.toLowerCase(),
    chainId,
    chainName: chainId,
    eventType,
    address,
    amountNative: raw === null ? null : Number(raw) / 10 ** decimals,
    amountRaw: raw,
    decimals,
    amountUsdAtEvent: usd,
    amountSource: raw === null ? "unavailable" : "event",
    amountStatus: raw === null ? "recoverable_pending" : "resolved",
    txHash: `0x${i.toString(16).padStart(64, "0")}`,
    blockNumber: 100 + i,
    logIndex: 0,
    timestamp: T0 + i * 60,
    methodologyVersion: "ballast-freeze-v2",
    contractAddress: `0xc-${chainId}-${stablecoin}`,
    configKey: `${stablecoin}:${chainId}`,
    eventSignature: null,
    eventTopic0: null,
    suppressionReason: null,
    explorerTxUrl: null,
    explorerAddressUrl: null,
    linkedFreezeEventId: linked,
    frozenDurationSec: linked ? 60 : null,
    origin: "live",
  };
}
const newestFirst = (events: BlacklistEvent[]) => [...events].reverse();
const summarize = (events: BlacklistEvent[]) =>
  BlacklistSummarySchema.parse(blacklistSummary(newestFirst(events), [], [], T0 + 86400));

describe("blacklist summary totals", () => {
  // USDX on Ethereum (6 decimals) and BSC (18 decimals); GOLD (18 decimals, 3,000 USD per unit).
  const freezeA = ev("USDX", "ethereum", "blacklist", "0xa", "1500000", 6, 1.5);
  const freezeB = ev("USDX", "bsc", "blacklist", "0xb", "2250000000000000000", 18, 2.25);
  const freezeC = ev("USDX", "ethereum", "blacklist", "0xc", null, 6, null);
  const freezeG = ev("GOLD", "ethereum", "blacklist", "0xg", "2000000000000000000", 18, 6000);
  const destroyA = ev("USDX", "ethereum", "destroy", "0xa", "1500000", 6, 1.5, freezeA.id);
  const destroyD = ev("USDX", "bsc", "destroy", "0xd", "250000000000000000", 18, 0.25);
  const destroyH = ev("GOLD", "ethereum", "destroy", "0xh", null, 18, null);

  it("a total with an unknown term is null, with the count of unknown terms beside it; units USD, Native, Exact", () => {
    const { stats, reconciliation } = summarize([freezeA, freezeB, freezeC, freezeG, destroyA, destroyD, destroyH]);
    // active: B (2.25 USDX), C (unknown USDX), G (2 GOLD = 6,000 USD); A was destroyed
    expect(stats.activeAddressCount).toBe(3);
    expect(stats.activeFrozenTotal).toBeNull();
    expect(stats.activeAmountGapCount).toBe(1);
    expect(stats.perCoinFrozenTotal).toEqual({ GOLD: 6000, USDX: null });
    expect(stats.perCoinFrozenTotalNative).toEqual({ GOLD: 2, USDX: null });
    expect(stats.perCoinFrozenAmountGapCount).toEqual({ GOLD: 0, USDX: 1 });
    expect(stats.trackedFrozenTotal).toBeNull();
    expect(stats.trackedAmountGapCount).toBe(3);
    // destroyed: 1.5 + 0.25 USDX across 6- and 18-decimal contracts; GOLD's destroy has no amount
    expect(stats.destroyedTotal).toBeNull();
    expect(stats.destroyedAmountGapCount).toBe(1);
    expect(stats.perCoinDestroyedTotal).toEqual({ GOLD: null, USDX: 1.75 });
    expect(stats.perCoinDestroyedTotalNative).toEqual({ GOLD: null, USDX: 1.75 });
    expect(stats.perCoinDestroyedTotalExact).toEqual({ GOLD: null, USDX: "1.75" });
    expect(stats.perCoinDestroyedAmountGapCount).toEqual({ GOLD: 1, USDX: 0 });
    expect(reconciliation.destroyedRawAmounts).toEqual({ GOLD: null, USDX: "1750000000000000000" });
    expect(stats.frozenThenDestroyed).toMatchObject({
      count: 1,
      perCoinAmount: { USDX: "1.5" },
      perCoinAmountGapCount: { USDX: 0 },
    });
  });

  it("with every term known the totals are sums (USD across coins), gap counts 0", () => {
    const { stats } = summarize([freezeA, freezeB, freezeG, destroyA, destroyD]);
    expect(stats.activeFrozenTotal).toBeCloseTo(2.25 + 6000, 9);
    expect(stats.activeAmountGapCount).toBe(0);
    expect(stats.perCoinFrozenTotal).toEqual({ GOLD: 6000, USDX: 2.25 });
    expect(stats.destroyedTotal).toBeCloseTo(1.75, 12);
    expect(stats.destroyedAmountGapCount).toBe(0);
    // no current-balance snapshots exist: tracked totals stay unknown while any record is active
    expect(stats.trackedFrozenTotal).toBeNull();
    expect(stats.trackedAmountGapCount).toBe(2);
  });

  it("an empty ledger sums to 0 (no unknown term)", () => {
    const { stats } = summarize([]);
    expect(stats).toMatchObject({
      activeFrozenTotal: 0,
      trackedFrozenTotal: 0,
      destroyedTotal: 0,
      activeAmountGapCount: 0,
      trackedAmountGapCount: 0,
      destroyedAmountGapCount: 0,
    });
  });

  it("USD sums of many terms lose no cents (596 destroys of 0.1)", () => {
    const many = Array.from({ length: 596 }, (_, i) => ev("USDX", "ethereum", "destroy", `0x${i}`, "100000", 6, 0.1));
    const { stats } = summarize(many);
    expect(stats.destroyedTotal).toBe(59.6);
    expect(stats.perCoinDestroyedTotalExact).toEqual({ USDX: "59.6" });
  });
});

describe("/api/mint-burn-flows windows count only their own events", () => {
  const H = 3600;
  const AS_OF = T0 + 1000 * H; // on the hour: windows end at as-of
  const hour = (hoursBeforeEnd: number, f: Partial<FlowHour>): FlowHour => ({
    hourTs: AS_OF - hoursBeforeEnd * H,
    mintedUsd: null,
    burnedUsd: null,
    mintedNative: 0,
    burnedNative: 0,
    mintCount: 0,
    burnCount: 0,
    unpricedMintCount: 0,
    unpricedBurnCount: 0,
    excludedEventCounts: { atomic_roundtrip: 0, fast_roundtrip: 0, bridge_transfer: 0, frozen_funds: 0 },
    ...f,
  });
  const excluded = (e: Partial<FlowHour["excludedEventCounts"]>) => ({
    atomic_roundtrip: 0,
    fast_roundtrip: 0,
    bridge_transfer: 0,
    frozen_funds: 0,
    ...e,
  });
  const flows: MintBurnHourly = {
    coins: [
      {
        stablecoinId: "usdx-test",
        symbol: "USDX",
        hourly: [
          hour(500, { excludedEventCounts: excluded({ fast_roundtrip: 50 }) }), // ~21 days before as-of
          hour(30, {
            mintedUsd: 10,
            mintedNative: 10,
            mintCount: 1,
            excludedEventCounts: excluded({ bridge_transfer: 2 }),
          }),
          hour(1, {
            burnedUsd: 4,
            burnedNative: 4,
            burnCount: 1,
            excludedEventCounts: excluded({ atomic_roundtrip: 2, frozen_funds: 1 }),
          }), // the last hour
        ],
      },
    ],
  };
  const coin = (hours: number) => queryMintBurnFlows(flows, AS_OF, { hours } as never).coins[0];

  it("hours=1: only the last hour", () => {
    expect(coin(1)).toMatchObject({
      mintCount: 0,
      burnCount: 1,
      burnedUsd: 4,
      excludedEventCounts: excluded({ atomic_roundtrip: 2, frozen_funds: 1 }),
    });
  });
  it("hours=24: nothing outside the day; hours=48 and 720 add their older hours", () => {
    expect(coin(24).excludedEventCounts).toEqual(excluded({ atomic_roundtrip: 2, frozen_funds: 1 }));
    expect(coin(48)).toMatchObject({
      mintCount: 1,
      burnCount: 1,
      netFlowUsd: 6,
      excludedEventCounts: excluded({ atomic_roundtrip: 2, frozen_funds: 1, bridge_transfer: 2 }),
    });
    expect(coin(720).excludedEventCounts).toEqual(
      excluded({ atomic_roundtrip: 2, frozen_funds: 1, bridge_transfer: 2, fast_roundtrip: 50 }),
    );
  });
  it("a window after the last event has no counts at all", () => {
    const later = queryMintBurnFlows(flows, AS_OF + 100 * H, { hours: 24 } as never).coins[0];
    expect(later).toMatchObject({
      mintCount: 0,
      burnCount: 0,
      netFlowDirection: "inactive",
      netFlowUsd: null,
      excludedEventCounts: excluded({}),
    });
  });
});
