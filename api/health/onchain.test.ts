import { describe, expect, it } from "vitest";
import { onchainCheck } from "./onchain.ts";

// Spec 2.8: the live mint/burn lane is fresh ≤ 60 min, degraded ≤ 90, stale beyond; blacklist never escalates status.
const NOW = 1_757_203_200;
const inputs = {
  blacklist: {
    totalEvents: 200,
    missingAmounts: 4,
    recentMissingAmounts: 1,
    recentWindowSec: 30 * 86400,
    missingRatio: 0.02,
  },
  mintBurn: {
    totalEvents: 9,
    latestEventTsBySymbol: { USDT: NOW - 60, PYUSD: NOW - 8 * 86400 },
    latestHourlyTs: NOW - 3600,
  },
};
const withLiveSync = (at: number | null) => ({
  sources:
    at === null
      ? []
      : [
          {
            endpoint: "onchain.events",
            status: "ok" as const,
            rows: 1,
            dropped: {},
            newestObservedAt: at,
            captures: [{ path: "l", origin: "live" as const, observedAt: at, sha256: "0", rows: 1 }],
          },
        ],
});

describe("on-chain sections check", () => {
  it("without a live ledger the lane is reported stale as a note only; amount gaps are a note", () => {
    const c = onchainCheck(withLiveSync(null), inputs, NOW);
    expect(c.causes).toEqual([]);
    expect(c.section.mintBurn).toMatchObject({
      latestEventTs: NOW - 60,
      majorStaleCount: 1,
      staleMajorSymbols: ["PYUSD"],
    });
    expect(c.section.mintBurn?.sync).toMatchObject({
      lastSuccessfulSyncAt: null,
      freshnessStatus: "stale",
      criticalLaneHealthy: false,
    });
    expect(c.notes).toEqual([
      expect.stringMatching(/^mint\/burn lane \(no effect on status\): no live mint\/burn ingestion/),
      expect.stringContaining("4 of 200 events have no amount yet (2.0%), 1 in the last 30 days"),
    ]);
    expect(c.section.blacklist).toBe(inputs.blacklist);
  });

  it("a live lane 61-90 min old degrades, older is stale (cause mint-burn-lane); within 60 min it is fresh", () => {
    expect(onchainCheck(withLiveSync(NOW - 3600), inputs, NOW).causes).toEqual([]);
    expect(onchainCheck(withLiveSync(NOW - 3601), inputs, NOW).causes).toEqual([
      { code: "mint-burn-lane", status: "degraded", publicImpact: true, detail: "mint/burn lane degraded" },
    ]);
    expect(onchainCheck(withLiveSync(NOW - 5401), inputs, NOW).causes.map((c) => c.status)).toEqual(["stale"]);
  });

  it("sections are null without their artifacts", () => {
    expect(onchainCheck(withLiveSync(null), undefined, NOW).section).toEqual({ blacklist: null, mintBurn: null });
  });
});
