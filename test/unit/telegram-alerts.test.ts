import { describe, expect, it } from "vitest";
import {
  type AlertSnapshot,
  diffAlerts,
  formatUsd,
  LARGE_FREEZE_MIN_USD,
  safetySource,
} from "../../api/lib/telegram/alerts.ts";
import { alertSnapshot } from "../../api/lib/telegram/dispatch.ts";
import { depegEvent, freezeEvent, gradesPayload, MemoryPublished, T0 } from "../helpers/alert-fixtures.ts";
import { must } from "../helpers/must.ts";

const DAY = 86_400;
const T1 = T0 + DAY;

const usda = depegEvent({ id: 101, stablecoinId: "usda-angle", symbol: "USDA", startedAt: T0 - 3600 });
const grades0 = gradesPayload(T0, {
  "usd-coin": ["USDC", "A", 90],
  tether: ["USDT", "B", 72],
  "usdz-anzen": ["USDz", "NR", null],
});

function snap(buildId: string, asOf: number, over: Partial<AlertSnapshot> = {}): AlertSnapshot {
  return {
    buildId,
    asOf,
    depeg: [],
    freezes: [],
    grades: gradesPayload(asOf, {
      "usd-coin": ["USDC", "A", 90],
      tether: ["USDT", "B", 72],
      "usdz-anzen": ["USDz", "NR", null],
    }),
    ...over,
  };
}

describe("diffAlerts: first run", () => {
  it("records the baseline and sends nothing, whatever the build holds", () => {
    const next = snap("b0", T0, {
      depeg: [usda],
      freezes: [freezeEvent({ id: "f1", stablecoinId: "tether", stablecoin: "USDT", amountUsdAtEvent: 5e6 })],
      grades: grades0,
    });
    const diff = diffAlerts(null, next, T0);
    expect(diff.baseline).toBe(true);
    expect(diff.alerts).toEqual([]);
    expect(diff.safety).toEqual({ state: "ok", ageSec: 0, generation: "ballast-safety-score-v1", asOf: T0 });
  });
});

describe("diffAlerts: depeg incidents", () => {
  it("a new incident gives one alert with symbol, figures, units and the details path", () => {
    const diff = diffAlerts(snap("b0", T0), snap("b1", T1, { depeg: [usda] }), T1);
    expect(diff.baseline).toBe(false);
    expect(diff.alerts).toHaveLength(1);
    const [a] = diff.alerts;
    expect(a).toMatchObject({
      id: "depeg:101",
      kind: "depeg-started",
      coinId: "usda-angle",
      symbol: "USDA",
      link: "/api/depeg-events?stablecoin=usda-angle",
      at: T0 - 3600,
    });
    expect(a.text).toBe(
      [
        "USDA depeg: 369 bps (3.69%) below its USD peg at peak.",
        "Price USD 0.9631 vs peg USD 1.0000; started 2025-09-06 23:00 UTC, ongoing.",
        "Details: /api/depeg-events?stablecoin=usda-angle",
      ].join("\n"),
    );
  });

  it("an incident already in the previous build gives nothing", () => {
    const diff = diffAlerts(
      snap("b0", T0, { depeg: [usda] }),
      snap("b1", T1, { depeg: [{ ...usda, peakDeviationBps: -500 }] }),
      T1,
    );
    expect(diff.alerts).toEqual([]);
  });

  it("a new incident older than the recent window is history: skipped and counted", () => {
    const old = depegEvent({
      id: 7,
      stablecoinId: "usd-coin",
      symbol: "USDC",
      startedAt: T1 - 8 * DAY,
      endedAt: T1 - 7.5 * DAY,
    });
    const diff = diffAlerts(snap("b0", T0), snap("b1", T1, { depeg: [old] }), T1);
    expect(diff.alerts).toEqual([]);
    expect(diff.skipped.historical).toBe(1);
    expect(
      diffAlerts(snap("b0", T0), snap("b1", T1, { depeg: [old] }), T1, { recentWindowSec: 9 * DAY }).alerts,
    ).toHaveLength(1);
  });

  it("an open incident that closed gives one resolution alert", () => {
    const closed = {
      ...usda,
      endedAt: T0 + 12 * 3600,
      closeReason: "recovered-primary" as const,
      recoveryPrice: 0.9995,
    };
    const diff = diffAlerts(snap("b0", T0, { depeg: [usda] }), snap("b1", T1, { depeg: [closed] }), T1);
    expect(diff.alerts.map((a) => [a.id, a.kind])).toEqual([["depeg-end:101", "depeg-ended"]]);
    expect(diff.alerts[0].text).toContain(
      "USDA depeg ended 2025-09-07 12:00 UTC after 13h 0m (recovered-primary, recovered at USD 0.9995).",
    );
    // Closed already in the previous build: nothing again.
    expect(
      diffAlerts(snap("b1", T1, { depeg: [closed] }), snap("b2", T1 + DAY, { depeg: [closed] }), T1 + DAY).alerts,
    ).toEqual([]);
  });

  it("a build without the depeg file gives no depeg alerts either way (no flood when it comes back)", () => {
    const a = diffAlerts(snap("b0", T0, { depeg: null }), snap("b1", T1, { depeg: [usda] }), T1);
    expect(a.alerts).toEqual([]);
    expect(a.skipped.sourcesMissing).toEqual(["depeg"]);
  });
});

describe("diffAlerts: safety grades", () => {
  it("a changed letter grade gives one alert; unchanged grades and NR transitions give none", () => {
    const next = snap("b1", T1, {
      grades: gradesPayload(T1, {
        "usd-coin": ["USDC", "A", 90],
        tether: ["USDT", "C+", 61],
        "usdz-anzen": ["USDz", "D", 44],
      }),
    });
    const diff = diffAlerts(snap("b0", T0), next, T1);
    expect(diff.alerts).toHaveLength(1);
    expect(diff.alerts[0]).toMatchObject({
      id: "grade:tether:b1",
      kind: "grade-change",
      coinId: "tether",
      symbol: "USDT",
      at: T1,
    });
    expect(diff.alerts[0].text).toBe(
      "USDT safety grade downgraded: B → C+ (score 72 → 61 of 100, ballast-safety-score-v1).\nDetails: /api/safety-score-history?stablecoin=tether",
    );
    expect(diff.skipped.notRated).toBe(1);
  });

  it("an upgrade says so", () => {
    const next = snap("b1", T1, {
      grades: gradesPayload(T1, { "usd-coin": ["USDC", "A+", 95], tether: ["USDT", "B", 72] }),
    });
    expect(diffAlerts(snap("b0", T0), next, T1).alerts[0].text).toMatch(/^USDC safety grade upgraded: A → A\+/);
  });

  it("grade changes are suppressed when the source is stale (old or held), of another generation, missing or corrupt", () => {
    const changed = (asOf: number, over?: Parameters<typeof gradesPayload>[2]) =>
      gradesPayload(asOf, { "usd-coin": ["USDC", "B", 80] }, over);
    // 3 days old at the data clock: stale.
    const old = diffAlerts(snap("b0", T0), snap("b1", T1, { grades: changed(T1) }), T1 + 3 * DAY);
    expect(old.safety.state).toBe("stale");
    expect(old.safety.ageSec).toBe(3 * DAY);
    expect(old.alerts).toEqual([]);
    expect(old.skipped.gradeSuppressed).toBe(1);
    expect(diffAlerts(snap("b0", T0), snap("b1", T1, { grades: changed(T1, { held: true }) }), T1).safety.state).toBe(
      "stale",
    );
    expect(
      diffAlerts(snap("b0", T0), snap("b1", T1, { grades: changed(T1, { version: "ballast-safety-score-v2" }) }), T1)
        .safety.state,
    ).toBe("wrong-generation");
    expect(
      diffAlerts(snap("b0", T0), snap("b1", T1, { grades: changed(T1, { isCurrent: false }) }), T1).safety.state,
    ).toBe("wrong-generation");
    for (const s of ["missing", "corrupt"] as const) {
      const d = diffAlerts(snap("b0", T0), snap("b1", T1, { grades: s }), T1);
      expect(d.safety).toEqual({ state: s, ageSec: null, generation: null, asOf: null });
      expect(d.alerts).toEqual([]);
    }
    // Within budget and same generation: sent.
    expect(diffAlerts(snap("b0", T0), snap("b1", T1, { grades: changed(T1) }), T1 + DAY).alerts).toHaveLength(1);
    expect(safetySource(changed(T1), null, T1 + DAY, DAY / 2).state).toBe("stale");
  });
});

describe("diffAlerts: large freezes", () => {
  const f = (
    id: string,
    usd: number | null,
    over: Parameters<typeof freezeEvent>[0] extends infer P ? Partial<P> : never = {},
  ) => freezeEvent({ id, stablecoinId: "tether", stablecoin: "USDT", amountUsdAtEvent: usd, ...over });

  it("at or above USD 1M alerts once; below does not; events without an amount are skipped and counted", () => {
    const next = snap("b1", T1, {
      freezes: [
        f("below", LARGE_FREEZE_MIN_USD - 1),
        f("at", LARGE_FREEZE_MIN_USD),
        f("big", 2.5e6),
        f("nil", null),
        f("unfreeze", 9e6, { eventType: "unblacklist" }),
      ],
    });
    const diff = diffAlerts(snap("b0", T0), next, T1);
    expect(diff.alerts.map((a) => a.id)).toEqual(["freeze:at", "freeze:big"]);
    expect(diff.skipped.freezesWithoutAmount).toBe(1);
    const big = must(
      diff.alerts.find((a) => a.id === "freeze:big"),
      "the freeze:big alert",
    );
    expect(big).toMatchObject({
      kind: "large-freeze",
      coinId: "tether",
      symbol: "USDT",
      link: "/api/blacklist?stablecoin=USDT&eventType=blacklist",
    });
    expect(big.text).toContain(
      "USDT large freeze: USD 2.50M (2,500,000 USDT) frozen at 0x1234…5678 on Ethereum, 2025-09-06 22:00 UTC.",
    );
    expect(big.text).toContain("Details: /api/blacklist?stablecoin=USDT&eventType=blacklist");
  });

  it("the threshold is an option", () => {
    const diff = diffAlerts(snap("b0", T0), snap("b1", T1, { freezes: [f("x", 600_000)] }), T1, {
      largeFreezeMinUsd: 500_000,
    });
    expect(diff.alerts.map((a) => a.id)).toEqual(["freeze:x"]);
  });

  it("an event already large before gives nothing; one whose amount resolved late alerts once", () => {
    const prev = snap("b0", T0, { freezes: [f("known", 3e6), f("late", null)] });
    const diff = diffAlerts(prev, snap("b1", T1, { freezes: [f("known", 3e6), f("late", 4e6)] }), T1);
    expect(diff.alerts.map((a) => a.id)).toEqual(["freeze:late"]);
    expect(diff.skipped.freezesWithoutAmount).toBe(0);
  });

  it("a destroy above the threshold alerts; an old large freeze new to the ledger is history", () => {
    const diff = diffAlerts(
      snap("b0", T0),
      snap("b1", T1, { freezes: [f("d", 2e6, { eventType: "destroy" }), f("old", 9e6, { timestamp: T1 - 30 * DAY })] }),
      T1,
    );
    expect(diff.alerts.map((a) => a.id)).toEqual(["freeze:d"]);
    expect(diff.alerts[0].text).toMatch(/^USDT large destroy: USD 2\.00M .* destroyed \(frozen funds burned\)/);
    expect(diff.skipped.historical).toBe(1);
  });
});

describe("alerts: ordering and helpers", () => {
  it("lists kinds in order (started, ended, grade, freeze)", () => {
    const prev = snap("b0", T0, { depeg: [usda] });
    const next = snap("b1", T1, {
      depeg: [
        { ...usda, endedAt: T0 + 60 },
        depegEvent({ id: 5, stablecoinId: "tether", symbol: "USDT", startedAt: T1 - 60 }),
      ],
      freezes: [freezeEvent({ id: "z", stablecoinId: "tether", stablecoin: "USDT", amountUsdAtEvent: 1e7 })],
      grades: gradesPayload(T1, { "usd-coin": ["USDC", "A-", 86], tether: ["USDT", "B", 72] }),
    });
    expect(diffAlerts(prev, next, T1).alerts.map((a) => a.kind)).toEqual([
      "depeg-started",
      "depeg-ended",
      "grade-change",
      "large-freeze",
    ]);
  });

  it("formats USD amounts compactly", () => {
    expect([formatUsd(950_000), formatUsd(1_000_000), formatUsd(2_345_678_901)]).toEqual([
      "USD 950,000",
      "USD 1.00M",
      "USD 2.35B",
    ]);
  });
});

describe("alertSnapshot", () => {
  it("reads a published build; an absent grades file is missing, an unparseable one corrupt, an absent ledger null", async () => {
    const pub = new MemoryPublished();
    const full = await alertSnapshot(pub.publish("b0", T0, { depeg: [usda], freezes: [], grades: grades0 }));
    expect(full).toMatchObject({ buildId: "b0", asOf: T0, depeg: [usda], freezes: [] });
    expect(typeof full.grades).toBe("object");
    const empty = await alertSnapshot(pub.publish("b1", T1, {}));
    expect(empty).toMatchObject({ depeg: null, freezes: null, grades: "missing" });
    expect((await alertSnapshot(pub.publish("b2", T1, { grades: "{not json" }))).grades).toBe("corrupt");
    expect((await alertSnapshot(pub.publish("b3", T1, { grades: JSON.stringify({ grades: "wrong" }) }))).grades).toBe(
      "corrupt",
    );
  });
});
