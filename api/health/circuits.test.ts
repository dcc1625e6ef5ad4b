import { describe, expect, it } from "vitest";
import { CIRCUIT_GROUPS, circuitGroup, circuitOf, circuitsCheck } from "./circuits.ts";

// Spec 2.8: ≥ 3 circuit groups with an open circuit → degraded; fewer → reported without effect on status.
const AS_OF = 1_757_203_200;
const open = (lastSuccessAt: number | null = AS_OF - 600) => ({
  state: "open" as const,
  consecutiveFailures: 2,
  lastSuccessAt,
});
const build = (circuits: Record<string, ReturnType<typeof open>>) => ({ asOf: AS_OF, sources: [], circuits });

describe("circuits check", () => {
  it("groups circuits by upstream family: alchemy copies coingecko, frankfurter is ecb, unknown names are their own group", () => {
    expect(circuitOf("coingecko.markets")).toBe("coingecko");
    expect(circuitGroup("alchemy")).toBe("coingecko");
    expect(circuitGroup("frankfurter")).toBe("ecb");
    expect(circuitGroup("somewhere-new")).toBe("somewhere-new");
    expect(CIRCUIT_GROUPS.usds).toBe("onchain");
  });

  it("two open circuits of one group and one of another: a note, no cause", () => {
    const c = circuitsCheck(build({ coingecko: open(), alchemy: open(), binance: open(null) }));
    expect(c.causes).toEqual([]);
    expect(c.statusWarnings).toEqual([]);
    expect(c.notes).toEqual([expect.stringContaining("no effect on status below 3 groups")]);
    expect(c.notes[0]).toContain("binance: 2 consecutive failures, last success never");
    expect(Object.keys(c.section)).toEqual(["alchemy", "binance", "coingecko"]);
  });

  it("three open groups set status degraded (cause circuit-groups-open, public impact)", () => {
    const c = circuitsCheck(build({ coingecko: open(), binance: open(), defillama: open() }));
    expect(c.causes).toEqual([
      {
        code: "circuit-groups-open",
        status: "degraded",
        publicImpact: true,
        detail: "3 circuit groups open: binance, coingecko, defillama",
      },
    ]);
    expect(c.statusWarnings).toEqual([expect.stringContaining("sets status degraded")]);
    expect(c.notes).toEqual([]);
  });

  it("derives a circuit from captures when none was recorded: a rejected capture after the last success opens it", () => {
    const source = {
      endpoint: "binance.klines",
      status: "ok" as const,
      rows: 1,
      dropped: {},
      newestObservedAt: AS_OF - 100,
      captures: [
        { path: "a", origin: "live" as const, observedAt: AS_OF - 100, sha256: "0", rows: 5 },
        {
          path: "b",
          origin: "live" as const,
          observedAt: AS_OF - 50,
          sha256: "0",
          rows: 0,
          rejected: "payload-rejected",
        },
      ],
    };
    const c = circuitsCheck({ asOf: AS_OF, sources: [source], circuits: {} });
    expect(c.section.binance).toEqual({ state: "open", consecutiveFailures: 1, lastSuccessAt: AS_OF - 100 });
  });
});
