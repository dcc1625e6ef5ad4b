import { describe, expect, it } from "vitest";
import { type AuditEvent, auditDepegHistory } from "../../pipelines/analytics/depeg-audit.ts";
import type { DepegEventRow } from "../../pipelines/analytics/depeg-detection.ts";
import { applyDepegVerdicts, type DepegVerdictRow } from "../../pipelines/analytics/depeg-verdicts.ts";
import { type DewsDay, validateDews, type ValidationEvent } from "../../pipelines/analytics/dews-validation.ts";
import { dewsBand } from "../../pipelines/analytics/stress-signals.ts";

const DAY = 86_400;
const D0 = Date.parse("2023-03-01T00:00:00Z") / 1000;
const day = (n: number) => D0 + n * DAY;
const dews = (coin: string, scores: number[], from = 0): DewsDay[] =>
  scores.map((score, i) => ({ stablecoinId: coin, day: day(from + i), score, band: dewsBand(score) }));
const ev = (id: number, coin: string, start: number, end: number | null): ValidationEvent => ({
  id,
  stablecoinId: coin,
  symbol: coin.toUpperCase(),
  direction: "below",
  peakDeviationBps: -300,
  startedAt: start,
  endedAt: end,
});

describe("validateDews", () => {
  it("counts a lead only from scores issued (end of their day) before the start; the start day's own score is at-onset", () => {
    // coin a: calm days 0-3, alert on days 4-5 (issued at the end of day 5 = day(6)), event starts day 6 + 6 h
    // coin b: alert only on day 6, the day its event starts in (issued day(7) > start): at-onset
    // coin c: scored calm before its event: missed; coin d: no score at all: not covered
    const rows = [
      ...dews("a", [5, 5, 5, 5, 40, 60, 70, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10]),
      ...dews("b", [5, 5, 5, 5, 5, 5, 50, 5]),
      ...dews("c", [5, 5, 5, 5, 5, 5, 5, 5]),
    ];
    const events = [
      ev(1, "a", day(6) + 6 * 3600, day(7)),
      ev(2, "b", day(6) + 3600, day(6) + 7200),
      ev(3, "c", day(6), day(7)),
      ev(4, "d", day(6), day(7)),
    ];
    const r = validateDews(rows, events, day(30));
    const by = Object.fromEntries(r.events.map((e) => [e.id, e]));
    expect(by[1].outcome).toBe("warned");
    // crossing on day 4 (issued at day(5)); start day(6) + 6 h: lead 30 h
    expect(by[1].leadHours).toBe(30);
    expect(by[1].alertIssuedAt).toBe(day(5));
    expect(by[2].outcome).toBe("at-onset");
    expect(by[3].outcome).toBe("missed");
    expect(by[3].maxScoreBefore).toBe(5);
    expect(by[4].outcome).toBe("not-covered");
    expect(r.overall).toMatchObject({ events: 4, covered: 3, warned: 1, atOnset: 1, missed: 1, notCovered: 1 });
    expect(r.overall.recall).toBeCloseTo(1 / 3, 4);
    // episodes: a's days 4-6 (t0 = day 5, event 1 starts within 7 d: true); b's day 6 (t0 = day 7,
    // event 2 started before and ended less than 7 d before: in-event)
    expect(r.alertEpisodes.map((e) => [e.stablecoinId, e.outcome, e.eventId])).toEqual([
      ["a", "true", 1],
      ["b", "in-event", null],
    ]);
    expect(r.overall.precision).toBe(1);
    expect(r.overall.medianLeadHours).toBe(30);
  });

  it("an alert run no depeg follows within 7 days is a false alarm, one too recent to judge is open", () => {
    const rows = [...dews("a", [5, 50, 50, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5]), ...dews("a", [60], 20)];
    const r = validateDews(rows, [], day(24));
    expect(r.alertEpisodes.map((e) => [e.firstDay, e.outcome])).toEqual([
      [day(1), "false"],
      [day(20), "open"],
    ]);
    expect(r.overall).toMatchObject({ alertEpisodes: 2, falseAlarms: 1, openAlerts: 1, trueAlerts: 0, precision: 0 });
    expect(r.overall.recall).toBeNull();
  });

  it("flags an event starting within 7 days after another of the coin as a follow-up (recall over fresh events apart)", () => {
    const rows = dews("a", Array(20).fill(40));
    const r = validateDews(rows, [ev(1, "a", day(8), day(9)), ev(2, "a", day(12), day(13))], day(30));
    expect(r.events.map((e) => [e.id, e.outcome, e.followUp])).toEqual([
      [1, "warned", false],
      [2, "warned", true],
    ]);
    expect(r.overall).toMatchObject({ covered: 2, freshCovered: 1, freshWarned: 1 });
    // one run of 20 alert days from day 0: crossing issued day(1), leads 7 d and 11 d
    expect(r.events.map((e) => e.leadHours)).toEqual([168, 264]);
  });
});

const auditEvent = (over: Partial<AuditEvent> & { id: number; startedAt: number }): AuditEvent => ({
  stablecoinId: "x",
  symbol: "X",
  direction: "below",
  peakDeviationBps: -400,
  endedAt: over.startedAt + 3600,
  peakFamilies: 2,
  otherSlotsMaxBps: 300,
  supplyUsdAtStart: 5e8,
  ...over,
});

describe("auditDepegHistory", () => {
  it("finds lone-print peaks, small or unknown supply, synthetic splits and events the rules no longer produce", () => {
    const events = [
      auditEvent({ id: 1, startedAt: day(0), peakFamilies: 1, otherSlotsMaxBps: 150 }), // 150 < 400/2: lone
      auditEvent({ id: 2, startedAt: day(0) + 7200, peakFamilies: 1, otherSlotsMaxBps: 250 }), // 1 h after 1 ended: split; 250 ≥ 200: not lone
      auditEvent({ id: 3, startedAt: day(5), supplyUsdAtStart: 4e5 }),
      auditEvent({ id: 4, startedAt: day(9), supplyUsdAtStart: null, direction: "above", peakDeviationBps: 300 }),
      auditEvent({ id: 5, startedAt: day(9) + 3600 * 30, direction: "above", peakDeviationBps: 300 }), // 29 h after 4 ended: no split
      auditEvent({ id: 6, startedAt: day(2), stablecoinId: "y", symbol: "Y" }),
    ];
    const published = [
      { id: 1, stablecoinId: "x", symbol: "X", startedAt: day(0) },
      { id: 99, stablecoinId: "x", symbol: "X", startedAt: day(1) },
    ];
    const r = auditDepegHistory(events, published, { symbol: "x", minSupply: 0 });
    expect(r.eventsAudited).toBe(5);
    expect(r.findings.map((f) => [f.kind, f.eventId])).toEqual([
      ["lone-print-peak", 1],
      ["synthetic-split", 1],
      ["not-reproduced", 99],
      ["small-supply", 3],
      ["unknown-supply", 4],
    ]);
    expect(r.splitChains).toEqual([[1, 2]]);
    // min-supply above the floor raises the threshold
    const strict = auditDepegHistory(events, published, { symbol: null, minSupply: 1e9 });
    expect(strict.findings.filter((f) => f.kind === "small-supply").map((f) => f.eventId)).toEqual([1, 2, 6, 3, 5]);
  });
});

const row = (id: number, start: number, end: number | null, peak: number): DepegEventRow =>
  ({
    id,
    stablecoinId: "x",
    symbol: "X",
    pegType: "peggedUSD",
    direction: "below",
    peakDeviationBps: peak,
    startedAt: start,
    endedAt: end,
    startPrice: 0.99,
    peakPrice: 1 + peak / 10_000,
    recoveryPrice: 0.999,
    pegReference: 1,
    source: "backfill",
    confirmationSources: null,
    pendingReason: null,
    closeReason: "recovered-primary",
    constituentEventCount: 1,
    provenance: { sourcePriceProviders: [`p${id}`], confirmationPointCount: 1, auditVerdict: null },
    families: [`f${id}`],
    trace: { opened: {}, peak: { bps: peak }, closed: {}, firstSeen: {} },
  }) as unknown as DepegEventRow;

describe("applyDepegVerdicts", () => {
  const v = (version: number, action: "delete" | "merge", id: number, into: number | null = null): DepegVerdictRow => ({
    version,
    key: `verdicts/depeg-history/v000${version}.json`,
    sha256: "s",
    action,
    event_id: id,
    merge_into: into,
  });
  it("deletes, merges a split chain into its first event and reports verdicts it cannot apply", () => {
    const incidents = [row(1, day(0), day(1), -200), row(2, day(1) + 3600, day(2), -500), row(3, day(5), day(6), -150)];
    const r = applyDepegVerdicts(incidents, [
      v(1, "merge", 1, 1),
      v(1, "merge", 2, 1),
      v(2, "delete", 3),
      v(2, "delete", 7),
    ]);
    expect(r.incidents.map((e) => [e.id, e.startedAt, e.endedAt, e.peakDeviationBps, e.constituentEventCount])).toEqual(
      [[1, day(0), day(2), -500, 2]],
    );
    expect(r.incidents[0].provenance.auditVerdict).toBe("synthetic-split-merged:v1");
    expect(r.incidents[0].families).toEqual(["f1", "f2"]);
    // id 7 is no incident of this coin: not this coin's verdict (peg_monitor reports it as not produced)
    expect(r.applied.map((a) => [a.action, a.event_id, a.applied])).toEqual([
      ["merge", 1, true],
      ["merge", 2, true],
      ["delete", 3, true],
    ]);
    const partial = applyDepegVerdicts([row(1, day(0), day(1), -200)], [v(1, "merge", 1, 1), v(1, "merge", 2, 1)]);
    expect(partial.incidents).toHaveLength(1);
    expect(partial.applied.map((a) => [a.event_id, a.applied, a.note])).toEqual([
      [1, false, "merge-group-incomplete"],
      [2, false, "event-not-produced"],
    ]);
  });
});
