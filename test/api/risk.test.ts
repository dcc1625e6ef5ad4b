import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { effectiveExitScore, legacyCard, safetyScore } from "../../pipelines/analytics/safety-score.ts";
import type { z } from "zod";
import {
  ReportCardsPayloadSchema,
  ReportCardsV9PayloadSchema,
  SafetyGradesPayloadSchema,
  type SafetyHistoryRowSchema,
} from "../../site-data/report-cards.ts";
import { must } from "../helpers/must.ts";
import { serveRecordedBuild } from "../helpers/served-build.ts";

/** A row of `/api/safety-score-history-v2`; the v1 route answers it without `publication`. */
type HistoryRowV2 = z.infer<typeof SafetyHistoryRowSchema>;
type HistoryRow = Omit<HistoryRowV2, "publication">;

let served: Awaited<ReturnType<typeof serveRecordedBuild>>;
const file = (path: string) =>
  JSON.parse(readFileSync(join(served.dir, "builds", served.manifest.buildId, path), "utf8"));

beforeAll(async () => {
  served = await serveRecordedBuild("ballast-risk-", "ballast_risk");
});
afterAll(async () => {
  await served?.close();
});

describe("grades are reproducible from their published rawInputs", () => {
  it("every safety card and every legacy card recomputes to its published score and grade (and its exit score to its inputs)", () => {
    const v9 = ReportCardsV9PayloadSchema.parse(file("site-data/report-cards-v9.json"));
    const legacy = ReportCardsPayloadSchema.parse(file("site-data/report-cards.json"));
    expect(v9.cards.length).toBeGreaterThan(250);
    for (const card of v9.cards) {
      const r = card.rawInputs;
      expect(
        effectiveExitScore(r.backing, r.circulatingUsd, r.liquidityScore, r.redemptionBackstopScore),
        card.id,
      ).toBe(r.effectiveExitScore);
      const again = safetyScore(card.rawInputs);
      expect({ id: card.id, score: again.score, grade: again.grade }).toEqual({
        id: card.id,
        score: card.score,
        grade: card.grade,
      });
    }
    expect(legacy.cards.length).toBeGreaterThan(0);
    for (const card of legacy.cards) {
      const again = legacyCard(card.rawInputs);
      expect({ id: card.id, score: again.overallScore, grade: again.overallGrade }).toEqual({
        id: card.id,
        score: card.overallScore,
        grade: card.overallGrade,
      });
    }
  });

  it("a dependent's rawInputs carry its upstreams' published scores", () => {
    const v9 = ReportCardsV9PayloadSchema.parse(file("site-data/report-cards-v9.json"));
    const score = new Map(v9.cards.map((c) => [c.id, c.score]));
    const deps = v9.cards.flatMap((c) => c.rawInputs.dependencies);
    expect(deps.filter((d) => score.has(d.id)).length).toBeGreaterThan(0);
    for (const d of deps) if (score.has(d.id)) expect(d.upstreamSafetyScore).toBe(score.get(d.id));
  });
});

describe("risk routes on the recorded build", () => {
  it("/api/safety-grades answers without a key: a grade or NR with reasons for every tracked coin", async () => {
    const res = await served.get("/api/safety-grades", null);
    expect(res.status).toBe(200);
    const body = SafetyGradesPayloadSchema.parse(res.body);
    const listed = file("site-data/stablecoins.json").peggedAssets.map((a: { id: string }) => a.id);
    const graded = new Set(body.grades.map((g) => g.id));
    expect(listed.length).toBeGreaterThan(0);
    for (const id of listed) expect(graded.has(id)).toBe(true);
    expect(body.grades.length).toBeGreaterThanOrEqual(listed.length);
    for (const g of body.grades) {
      if (g.grade === "NR") expect(g.missingInputs.length).toBeGreaterThan(0);
      else expect(g.score).not.toBeNull();
    }
    const grade = (id: string) => body.grades.find((g) => g.id === id)?.grade;
    // Sanity against the field: fully reserved, audited fiat coins grade in the A range; collapsed coins are F.
    for (const id of ["usdc-circle", "pyusd-paypal", "usdp-paxos"]) expect(["A+", "A", "A-"]).toContain(grade(id));
    for (const id of ["ust-terraform-labs", "usdn-neutrino", "husd-stable-universal", "iron-iron-finance"]) {
      expect(body.grades.find((g) => g.id === id)).toMatchObject({ grade: "F", score: 0, coverageClass: "defunct" });
    }
  });

  it("the exempt graph and scenario routes answer without a key; the keyed ones need one", async () => {
    expect((await served.get("/api/dependency-graph/v1", null)).status).toBe(200);
    expect((await served.get("/api/dependency-scenarios/v1", null)).status).toBe(200);
    expect((await served.get("/api/report-cards", null)).status).toBe(401);
    expect((await served.get("/api/report-cards/v9", null)).status).toBe(401);
    const v9 = await served.get<z.infer<typeof ReportCardsV9PayloadSchema>>("/api/report-cards/v9");
    expect(v9.status).toBe(200);
    expect(v9.body.publication.status).toBe("published");
    expect(v9.headers.get("Cache-Control")).not.toBe("no-store");
  });

  it("/api/safety-score-history: ascending days, a seed without prev, the published grade last, 400/404 on bad input", async () => {
    const grades = new Map(
      (await served.get<z.infer<typeof SafetyGradesPayloadSchema>>("/api/safety-grades", null)).body.grades.map((g) => [
        g.id,
        g,
      ]),
    );
    const res = await served.get<HistoryRow[]>("/api/safety-score-history?stablecoin=usdc-circle&days=3650");
    expect(res.status).toBe(200);
    const rows = res.body;
    expect(rows.length).toBeGreaterThan(0);
    expect(rows[0]).toMatchObject({ prevGrade: null, prevScore: null });
    for (let i = 1; i < rows.length; i++) {
      expect(rows[i].date).toBeGreaterThan(rows[i - 1].date);
      expect(rows[i].date % 86400).toBe(0);
      expect({ grade: rows[i].prevGrade, score: rows[i].prevScore }).toEqual({
        grade: rows[i - 1].grade,
        score: rows[i - 1].score,
      });
    }
    const usdc = must(grades.get("usdc-circle"), "usdc-circle in /api/safety-grades");
    expect(rows.at(-1)).toMatchObject({ grade: usdc.grade, score: usdc.score });
    expect(Object.keys(rows[0]).sort()).toEqual([
      "date",
      "grade",
      "methodologyVersion",
      "prevGrade",
      "prevScore",
      "score",
    ]);
    const v2 = await served.get<HistoryRowV2[]>("/api/safety-score-history-v2?stablecoin=usdc-circle&days=3650");
    expect(must(v2.body.at(-1), "the last v2 history row").publication).toMatchObject({
      kind: "published",
      methodologyVersion: "ballast-safety-score-v2",
    });
    const short = await served.get<HistoryRow[]>("/api/safety-score-history?stablecoin=usdc-circle&days=1");
    expect(short.body[0]).toMatchObject({ prevGrade: null });
    expect(short.body.at(-1)).toEqual(rows.at(-1));
    expect(
      (await served.get<{ error: string }>("/api/safety-score-history?stablecoin=usdc-circle&days=0")).body.error,
    ).toMatch(/days/);
    expect((await served.get("/api/safety-score-history?stablecoin=usdc-circle&days=3651")).status).toBe(400);
    expect((await served.get<{ error: string }>("/api/safety-score-history")).body.error).toMatch(/stablecoin/);
    expect((await served.get("/api/safety-score-history?stablecoin=USDC")).status).toBe(404);
  });

  it("UST's history turns F on its death day, and grade changes appear on the tape as score events", async () => {
    const ust = (await served.get<HistoryRow[]>("/api/safety-score-history?stablecoin=ust-terraform-labs&days=3650"))
      .body;
    expect(ust.at(-1)).toMatchObject({ grade: "F", score: 0, date: Date.parse("2022-05-09T00:00:00Z") / 1000 });
    const tape = await served.get<{ events: { type: string; ts: number }[] }>(
      "/api/events?class=score&coin=ust-terraform-labs&limit=10",
    );
    expect(tape.status).toBe(200);
    expect(
      tape.body.events.some((e) => e.ts === Date.parse("2022-05-09T00:00:00Z") / 1000 && e.type.startsWith("score.")),
    ).toBe(true);
  });
});
