import { describe, expect, it } from "vitest";
import {
  dependencyOrder,
  effectiveExitScore,
  gradeOf,
  legacyCard,
  safetyScore,
} from "../../pipelines/analytics/safety-score.ts";
import type { RawInputs } from "../../pipelines/analytics/safety-score.version.ts";
import { Db } from "../../build/duckdb.ts";
import type { Artifact } from "../../site-data/contract.ts";
import {
  dependencyGraphArtifact,
  DependencyGraphPayloadSchema,
  failureScenarios,
  publicationStatus,
  safetyGradesArtifact,
  SafetyGradesPayloadSchema,
} from "../../site-data/report-cards.ts";

/** A USDC-like coin: fiat reserves at very-low risk, top-tier custody, audited, regulated issuer, $72B, peg score 92. */
const fiat = (over: Partial<RawInputs> = {}): RawInputs => ({
  pegScore: 92,
  pegScoreUnavailableReason: null,
  pricedDays: 1251,
  hasCurrentPrice: true,
  activeDepeg: false,
  activeDepegBps: null,
  currentDeviationBps: 0,
  depegEventCount: 2,
  lastEventAt: null,
  circulatingUsd: 72e9,
  liquidityScore: null,
  effectiveExitScore: 91,
  redemptionBackstopScore: null,
  redemptionRouteFamily: "offchain-issuer",
  redemptionModelConfidence: null,
  redemptionUsedForLiquidity: false,
  redemptionImmediateCapacityUsd: null,
  redemptionImmediateCapacityRatio: null,
  concentrationHhi: null,
  bluechipGrade: null,
  canBeBlacklisted: true,
  chainTier: "ethereum",
  deploymentModel: "native-multichain",
  backing: "fiat-reserves",
  collateralQuality: "very-low",
  custodyModel: "institutional-top",
  proofOfReserves: "independent-audit",
  governanceTier: "regulated-entity",
  governanceQuality: 40,
  dependencies: [],
  navToken: false,
  floatingPeg: false,
  isDefunct: false,
  ...over,
});

describe("grade thresholds", () => {
  it("maps scores to the first grade whose minimum they reach", () => {
    expect([100, 87, 86.9, 83, 80, 79.9, 75, 70, 65, 60, 55, 50, 49, 40, 39, 0].map(gradeOf)).toEqual([
      "A+",
      "A+",
      "A",
      "A",
      "A-",
      "B+",
      "B+",
      "B",
      "B-",
      "C+",
      "C",
      "C-",
      "D",
      "D",
      "F",
      "F",
    ]);
    expect(gradeOf(null)).toBe("NR");
  });
});

describe("safety score (ballast-safety-score-v1)", () => {
  it("grades a fully reserved, audited fiat coin from its pillars and peg multiplier", () => {
    // backing 0.5·100 + 0.25·80 + 0.25·90 = 92.5 → 93; exit 91; control 0.6·85 + 0.4·round(100·0.75) = 81
    // base 0.4·93 + 0.35·91 + 0.25·81 = 89.3; × 0.92^0.4 (0.96720) = 86.37 → 86 (A)
    const s = safetyScore(fiat());
    expect(s.pillars.backing.score).toBe(93);
    expect(s.pillars.exit.score).toBe(91);
    expect(s.pillars.economicControl.score).toBe(81);
    expect(s.baseScore).toBe(89.3);
    expect(s.score).toBe(86);
    expect(s.grade).toBe("A");
  });

  it("caps a coin with a current price but under 30 priced days at 80 (A−)", () => {
    const s = safetyScore(
      fiat({
        pegScore: null,
        pegScoreUnavailableReason: "insufficient-history",
        pricedDays: 1,
        effectiveExitScore: 73,
      }),
    );
    // base 0.4·93 + 0.35·73 + 0.25·81 = 83.0, multiplier 1 → ceiling 80
    expect(s.score).toBe(80);
    expect(s.grade).toBe("A-");
    expect(s.caps.join(" ")).toMatch(/limited peg history/);
  });

  it("is NR, naming the missing inputs, without registry facts or without any price", () => {
    // every registry fact absent (the exit score is not a registry fact and is not named)
    const absentFacts = {
      backing: null,
      collateralQuality: null,
      custodyModel: null,
      proofOfReserves: null,
      governanceTier: null,
      chainTier: null,
      deploymentModel: null,
    };
    const noFacts = safetyScore(fiat({ ...absentFacts, effectiveExitScore: null }));
    expect(noFacts.grade).toBe("NR");
    expect(noFacts.score).toBeNull();
    expect(noFacts.missingInputs).toEqual(Object.keys(absentFacts));
    const noPrice = safetyScore(fiat({ pegScore: null, pegScoreUnavailableReason: "no-price", pricedDays: 0 }));
    expect(noPrice.grade).toBe("NR");
    expect(noPrice.missingInputs).toEqual(["pegScore (no-price)"]);
  });

  it("applies active-depeg caps, defunct F and NAV multiplier 1", () => {
    expect(safetyScore(fiat({ activeDepeg: true, activeDepegBps: 3000 })).score).toBe(39);
    expect(safetyScore(fiat({ activeDepeg: true, activeDepegBps: 1200 })).score).toBe(49);
    expect(safetyScore(fiat({ isDefunct: true }))).toMatchObject({ score: 0, grade: "F" });
    // NAV: multiplier 1 → round(89.3) = 89
    expect(safetyScore(fiat({ navToken: true, pegScore: null, pegScoreUnavailableReason: "nav-token" })).score).toBe(
      89,
    );
  });

  it("grades NR without a current price, NAV tokens and floating pegs included (v2)", () => {
    // A NAV token whose price is null at as-of (TBILL, USYC, USDY as of 2026-09-03): no grade, the price named.
    const stale = fiat({
      navToken: true,
      pegScore: null,
      pegScoreUnavailableReason: "nav-token",
      hasCurrentPrice: false,
    });
    expect(safetyScore(stale)).toMatchObject({ grade: "NR", score: null, missingInputs: ["price (no-current-price)"] });
    expect(legacyCard(stale)).toMatchObject({ overallGrade: "NR", overallScore: null });
    expect(legacyCard(stale).missingInputs).toEqual(["price (no-current-price)"]);
    const never = fiat({
      floatingPeg: true,
      pegScore: null,
      pegScoreUnavailableReason: "floating-peg",
      pricedDays: 0,
      hasCurrentPrice: false,
    });
    expect(safetyScore(never).missingInputs).toEqual(["price (no-price)"]);
    // with a current price the same NAV token is graded (multiplier 1), and a defunct coin stays F 0
    expect(safetyScore({ ...stale, hasCurrentPrice: true }).grade).not.toBe("NR");
    expect(safetyScore({ ...stale, isDefunct: true })).toMatchObject({ grade: "F", score: 0 });
  });

  it("blends exposure to a weaker upstream and caps wrappers at upstream − 3", () => {
    const dep = (type: "collateral" | "wrapper", weight: number, up: number | null) => [
      { id: "up", weight, type, upstreamSafetyScore: up, upstreamReportCardScore: up },
    ];
    // 0.6 · 86.371 + 0.4 · min(86.371, 50) = 71.82 → 72
    expect(safetyScore(fiat({ dependencies: dep("collateral", 0.4, 50) })).score).toBe(72);
    // unrated upstream counts 70: 0.6 · 86.371 + 0.4 · 70 = 79.82 → 80
    expect(safetyScore(fiat({ dependencies: dep("collateral", 0.4, null) })).score).toBe(80);
    const w = safetyScore(fiat({ dependencies: dep("wrapper", 1, 60) }));
    expect(w.score).toBe(57);
    expect(w.caps).toContain("wrapper dependency up: ≤ 57");
  });
});

describe("legacy report card (ballast-report-card-v1)", () => {
  it("weights the rated dimensions and applies the peg multiplier", () => {
    // liquidity 91, resilience (100+80)/2 = 90, decentralization 40, dependency 95 (self-backed, centralized)
    // base (0.3·91 + 0.2·90 + 0.15·40 + 0.25·95) / 0.9 = 83.39; × 0.96720 = 80.65 → 81 (A−)
    const c = legacyCard(fiat());
    expect(c.dimensions.resilience.score).toBe(90);
    expect(c.dimensions.decentralization.score).toBe(40);
    expect(c.dimensions.dependencyRisk.score).toBe(95);
    expect(c.baseScore).toBe(83.4);
    expect(c.overallScore).toBe(81);
    expect(c.ratedDimensions).toBe(5);
  });

  it("penalises a missing liquidity dimension by 0.9 and is NR with fewer than 2 rated dimensions", () => {
    // without exit: (0.2·90 + 0.15·40 + 0.25·95) / 0.6 = 79.58 × 0.96720 × 0.9 = 69.28 → 69
    expect(legacyCard(fiat({ effectiveExitScore: null })).overallScore).toBe(69);
    expect(
      legacyCard(fiat({ collateralQuality: null, custodyModel: null, governanceTier: null, effectiveExitScore: null }))
        .overallGrade,
    ).toBe("NR");
  });

  it("lowers dependency risk by 10 below a 75 upstream", () => {
    const c = legacyCard(
      fiat({
        dependencies: [
          { id: "up", weight: 0.5, type: "collateral", upstreamSafetyScore: 60, upstreamReportCardScore: 60 },
        ],
      }),
    );
    // 0.5 · 60 + 0.5 · 95 − 10 = 67.5 → 68
    expect(c.dimensions.dependencyRisk.score).toBe(68);
  });
});

describe("dependency order and failure scenarios", () => {
  it("orders upstream first and survives a cycle", () => {
    expect(
      dependencyOrder([
        { id: "a", deps: ["b"] },
        { id: "b", deps: [] },
        { id: "c", deps: ["a"] },
      ]),
    ).toEqual(["b", "a", "c"]);
    expect(
      dependencyOrder([
        { id: "x", deps: ["y"] },
        { id: "y", deps: ["x"] },
      ]).sort(),
    ).toEqual(["x", "y"]);
  });

  it("propagates an upstream failure transitively", () => {
    const card = (id: string, deps: RawInputs["dependencies"]) => {
      const raw = fiat({ dependencies: deps });
      return {
        id,
        symbol: id.toUpperCase(),
        name: id,
        safety: safetyScore(raw),
        legacy: legacyCard(raw),
        raw,
        coverage: "full" as const,
      };
    };
    const up = card("up", []);
    const mid = card("mid", [
      {
        id: "up",
        weight: 0.5,
        type: "collateral",
        upstreamSafetyScore: up.safety.score,
        upstreamReportCardScore: null,
      },
    ]);
    const leaf = card("leaf", [
      { id: "mid", weight: 1, type: "wrapper", upstreamSafetyScore: mid.safety.score, upstreamReportCardScore: null },
    ]);
    const scenarios = failureScenarios(
      [up, mid, leaf],
      [
        { from: "up", to: "mid", weight: 0.5, type: "collateral" },
        { from: "mid", to: "leaf", weight: 1, type: "wrapper" },
      ],
      { dependencyOrder, gradeOf, safetyScore },
    );
    expect(scenarios.map((s) => s.id)).toEqual(["mid-failure", "up-failure"]);
    const scenario = scenarios[1];
    // mid: 0.5 · 86.371 + 0.5 · 0 = 43.19 → 43 (D); leaf: wrapper of mid → 43 − 3 = 40
    expect(scenario.impacts).toEqual([
      {
        id: "mid",
        symbol: "MID",
        depth: 1,
        before: { score: mid.safety.score, grade: mid.safety.grade },
        after: { score: 43, grade: "D" },
      },
      {
        id: "leaf",
        symbol: "LEAF",
        depth: 2,
        before: { score: leaf.safety.score, grade: leaf.safety.grade },
        after: { score: 40, grade: "D" },
      },
    ]);
  });
});

describe("publication status", () => {
  it("holds the publication when the newest current price is over 48 h older than as-of", () => {
    const asOf = 1_757_203_200;
    expect(publicationStatus(asOf - 3600, asOf).status).toBe("published");
    // exactly 48 h is not over 48 h
    expect(publicationStatus(asOf - 48 * 3600, asOf).status).toBe("published");
    expect(publicationStatus(asOf - 49 * 3600, asOf)).toMatchObject({ status: "held" });
    expect(publicationStatus(null, asOf)).toMatchObject({ status: "held", reason: "no current price observations" });
  });
});

describe("a collapsed peg", () => {
  it("scores 0 (F) with a peg score of 0 whatever the other inputs, facts or not", () => {
    const none = {
      backing: null,
      collateralQuality: null,
      custodyModel: null,
      proofOfReserves: null,
      governanceTier: null,
      chainTier: null,
      deploymentModel: null,
      effectiveExitScore: null,
    };
    expect(safetyScore(fiat({ pegScore: 0, ...none }))).toMatchObject({ score: 0, grade: "F", missingInputs: [] });
    expect(legacyCard(fiat({ pegScore: 0 }))).toMatchObject({ overallScore: 0, overallGrade: "F" });
  });
});

describe("effective exit", () => {
  it("takes the better of market depth and redemption route plus a tenth of the other", () => {
    // $72B fiat: L = 20·log10(72,000) = 97.15, R = 65 → min(100, 97.15 + 6.5) = 100
    expect(effectiveExitScore("fiat-reserves", 72e9)).toBe(100);
    // $70M fiat: L = 20·log10(70) = 36.90, R = 65 → 65 + 3.69 = 68.69 → 69
    expect(effectiveExitScore("fiat-reserves", 70e6)).toBe(69);
    // $5B CDP: L = 73.98, R = 75 → 75 + 7.40 = 82.40 → 82
    expect(effectiveExitScore("crypto-overcollateralized", 5e9)).toBe(82);
    expect(effectiveExitScore(null, 5e9)).toBeNull();
    expect(effectiveExitScore("fiat-reserves", null)).toBeNull();
  });
});

describe("report-cards artifacts over report_cards.sql", () => {
  it("read the coins by id, the edges by upstream, the newest current price; empty tables give empty files", async () => {
    const db = await Db.open(":memory:");
    try {
      const asOf = 1_757_203_200;
      const ctx = { asOf, sourceObservedAt: { "defillama.stablecoins": asOf - 60 } };
      const emit = async (a: Artifact) => {
        await a.prepare?.();
        return a.assemble({ main: await db.all(a.queries.main) }, ctx);
      };
      const card = (id: string) => {
        const raw = fiat();
        return {
          stablecoin_id: id,
          symbol: id.toUpperCase(),
          name: `${id} coin`,
          safety_json: JSON.stringify(safetyScore(raw)),
          report_card_json: JSON.stringify(legacyCard(raw)),
          raw_inputs_json: JSON.stringify(raw),
          coverage_class: "full",
        };
      };
      const cardColumns = {
        stablecoin_id: "VARCHAR",
        symbol: "VARCHAR",
        name: "VARCHAR",
        safety_json: "VARCHAR",
        report_card_json: "VARCHAR",
        raw_inputs_json: "VARCHAR",
        coverage_class: "VARCHAR",
      } as const;
      const edgeColumns = { from_id: "VARCHAR", to_id: "VARCHAR", weight: "DOUBLE", type: "VARCHAR" } as const;
      await db.loadRows("report_cards", cardColumns, []);
      await db.loadRows("dependency_edges", edgeColumns, []);
      await db.loadRows("price_current", { price_observed_at: "DOUBLE" }, []);

      const none = await emit(safetyGradesArtifact);
      expect(none.files).toEqual([expect.objectContaining({ path: "site-data/safety-grades.json", rows: 0 })]);
      expect(none.files[0].payload).toMatchObject({
        grades: [],
        publication: { status: "held", reason: "no current price observations" },
      });
      expect((await emit(dependencyGraphArtifact)).files[0].payload).toMatchObject({ nodes: [], edges: [] });

      await db.loadRows("report_cards", cardColumns, [card("zeta"), card("alpha"), card("mid")]);
      await db.loadRows("dependency_edges", edgeColumns, [
        { from_id: "zeta", to_id: "alpha", weight: 0.25, type: "custody" },
        { from_id: "alpha", to_id: "zeta", weight: 0.5, type: "collateral" },
      ]);
      // the newest of the prices counts: 47 h old → published
      await db.loadRows("price_current", { price_observed_at: "DOUBLE" }, [
        { price_observed_at: asOf - 50 * 3600 },
        { price_observed_at: asOf - 47 * 3600 },
      ]);
      const grades = await emit(safetyGradesArtifact);
      expect(grades.dataAsOf).toBe(asOf - 60);
      expect(grades.files[0].rows).toBe(3);
      const gradesPayload = SafetyGradesPayloadSchema.parse(grades.files[0].payload);
      expect(gradesPayload.grades.map((g) => [g.id, g.symbol, g.publicationStatus])).toEqual([
        ["alpha", "ALPHA", "published"],
        ["mid", "MID", "published"],
        ["zeta", "ZETA", "published"],
      ]);
      expect(gradesPayload.publication).toEqual({ status: "published", reason: null, asOf });

      const graph = await emit(dependencyGraphArtifact);
      // rows: the edges; nodes: only coins on an edge (mid has none)
      expect(graph.files[0].rows).toBe(2);
      const graphPayload = DependencyGraphPayloadSchema.parse(graph.files[0].payload);
      expect(graphPayload.edges).toEqual([
        { from: "alpha", to: "zeta", weight: 0.5, type: "collateral" },
        { from: "zeta", to: "alpha", weight: 0.25, type: "custody" },
      ]);
      expect(graphPayload.nodes.map((n) => n.id)).toEqual(["alpha", "zeta"]);
    } finally {
      db.close();
    }
  });
});
