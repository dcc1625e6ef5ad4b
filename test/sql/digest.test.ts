import { readFileSync } from "node:fs";
import { join } from "node:path";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../build/duckdb.ts";
import { loadAndModel } from "../../build/stages/model.ts";
import { type DailyDigest, DailyDigestSchema, dailyDigestArtifact } from "../../site-data/daily-digest.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";

// Daily digests over the recorded history (issue 29, part 6): supply change on one stated basis with the
// market value apart, and incidents placed on the day their backdated start or end was confirmed.
const at = (iso: string) => Date.parse(iso) / 1000;
const DIGEST_SQL = dailyDigestArtifact.queries.main;

/** The digest row the artifact's SQL composes from a modelled build, checked against its schema. */
async function digestOf(db: Db): Promise<DailyDigest> {
  const rows = await db.all(DIGEST_SQL);
  expect(rows).toHaveLength(1);
  return DailyDigestSchema.parse(
    JSON.parse(JSON.stringify(rows[0], (_k, v) => (typeof v === "bigint" ? Number(v) : v))),
  );
}

const dbs = new Map<string, Db>();
beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  // one model run per digest day: as of the day's close
  for (const asOf of ["2022-11-12", "2023-03-12", "2023-08-04"])
    dbs.set(asOf, (await loadAndModel({ asOf: at(`${asOf}T00:00:00Z`), captureDir: CAPTURE_DIR })).db);
});
afterAll(() => {
  for (const db of dbs.values()) db.close();
});
const db = (asOf: string) => must(dbs.get(asOf), `the model run as of ${asOf}`);

describe("supply on one stated basis, market value apart (digest of 2023-03-11)", () => {
  it("reports units at par (-0.62 bn, -0.43%) and DefiLlama's price-valued total as market value (-2.83 bn, -2.11%)", async () => {
    // Expected from the raw chart CSV: its labels are US Eastern dates of DefiLlama's 00:00 UTC points, so
    // the row labelled D is D+1 00:00 UTC (MANIFEST "Time zones"): 2023-03-10 → 03-11 00:00Z, 2023-03-11 → 03-12.
    const csv = Papa.parse<Record<string, string>>(
      readFileSync(join(CAPTURE_DIR, "check-sked-crypto-data-resources/total_stablecoins_all_chains.csv"), "utf8"),
      { header: true, skipEmptyLines: true },
    ).data;
    const row = (label: string) =>
      must(
        csv.find((r) => r.Date === label),
        `chart row ${label}`,
      );
    const units = (label: string) => Number(row(label)["Total Circulating (Stablecoin Units)"]);
    const usd = (label: string) => Number(row(label)["Total Circulating ($)"]);
    const unitsChange = units("2023-03-11") - units("2023-03-10");
    const unitsPct = 100 * (units("2023-03-11") / units("2023-03-10") - 1);
    const usdChange = usd("2023-03-11") - usd("2023-03-10");
    expect(unitsChange / 1e9).toBeCloseTo(-0.62, 2);
    expect(unitsPct).toBeCloseTo(-0.43, 2);

    const d = await digestOf(db("2023-03-12"));
    expect(d.date).toBe("2023-03-11");
    const s = must(d.supply, "the supply section");
    expect(s).toMatchObject({ universe: "defillama-all", basis: "circulating-usd-pegs-at-par" });
    expect(s.totalUsd).toBeCloseTo(units("2023-03-11"), 2);
    expect(s.previousTotalUsd).toBeCloseTo(units("2023-03-10"), 2);
    expect(s.changeUsd).toBeCloseTo(unitsChange, 2);
    expect(s.changePct).toBe(Math.round(unitsPct * 100) / 100);
    const mv = must(s.marketValue, "the market value");
    expect(mv).toMatchObject({ source: "defillama-all", basis: "price-valued" });
    expect(mv.changeUsd).toBeCloseTo(usdChange, 2);
    expect(mv.changePct).toBe(-2.11);
    expect(d.headline).toContain("circulating supply -0.62 bn USD at par (-0.43%)");
    expect(d.headline).toContain("market value -2.83 bn USD (-2.11%)");
    expect(d.headline).not.toContain("total supply");
  });
});

describe("incidents appear on the day their backdated start or end was confirmed", () => {
  const usdj = (list: DailyDigest["depegIncidents"]["opened"]) => list.filter((i) => i.stablecoinId === "usdj-just");

  // Real case: USDJ's above-peg run (one episode, ballast-depeg-v4) is first seen at 2022-11-11 00:00Z and
  // confirmed by the next daily point (2022-11-12 00:00Z); the recorded prices end with 2023-07-31, so
  // tracking ends at 2023-08-01 00:00Z (orphan-tracking-removed), which is known once the 3-day coverage
  // gap after the last observation (2023-07-31 00:00Z) has passed: 2023-08-03 00:00:01Z.
  it("USDJ's start (2022-11-11 00:00Z) is in the digest of 2022-11-11, the day its confirmation closes", async () => {
    const d = await digestOf(db("2022-11-12"));
    expect(d.date).toBe("2022-11-11");
    const [i] = usdj(d.depegIncidents.opened);
    expect(i).toMatchObject({ direction: "above", startedAt: at("2022-11-11T00:00:00Z"), endedAt: null });
    expect(i.startedAt).toBeLessThanOrEqual(d.windowStart); // backdated to the first print
    expect(i.startConfirmedAt).toBe(at("2022-11-12T00:00:00Z"));
    expect(d.headline).toMatch(/USDJ \d+ bps since 2022-11-11 00:00Z/);
  });

  it("USDJ's end (2023-08-01 00:00Z) is in the digest of 2023-08-03, when tracking loss became known", async () => {
    const d = await digestOf(db("2023-08-04"));
    expect(d.date).toBe("2023-08-03");
    const [i] = usdj(d.depegIncidents.closed);
    expect(i).toMatchObject({
      startedAt: at("2022-11-11T00:00:00Z"),
      endedAt: at("2023-08-01T00:00:00Z"),
      closeReason: "orphan-tracking-removed",
    });
    // last observation 07-31 00:00Z, daily cadence: gap max(3 × 86400, 6 h) → known 1 s after 08-03 00:00Z
    expect(i.endConfirmedAt).toBe(at("2023-08-03T00:00:00Z") + 1);
    expect(i.endedAt ?? Number.POSITIVE_INFINITY).toBeLessThan(d.windowStart); // backdated before the window
    expect(usdj(d.depegIncidents.opened)).toEqual([]);
  });

  it("a constructed backdated start and a backdated end land in the window of their confirmation, not of their instants", async () => {
    const conn = db("2023-03-12"); // digest of 2023-03-11: window (03-11 00:00Z, 03-12 00:00Z]
    const trace = (opened: number, closed: number | null) =>
      JSON.stringify({ opened: { ts: opened }, closed: closed === null ? null : { ts: closed } });
    const rows = [
      // started the day before, confirmed inside the window → opened
      ["zz-backdated-start", at("2023-03-10T06:00:00Z"), null, null, trace(at("2023-03-11T12:00:00Z"), null)],
      // started inside the window, confirmed after its end → not in this edition
      ["zz-late-confirmed", at("2023-03-11T20:00:00Z"), null, null, trace(at("2023-03-12T06:00:00Z"), null)],
      // daily tracking lost after 03-08 23:00Z: ends 03-09 23:00Z, known 03-11 23:00:01Z → closed
      [
        "zz-orphan-end",
        at("2023-03-04T23:00:00Z"),
        at("2023-03-09T23:00:00Z"),
        "orphan-tracking-removed",
        trace(at("2023-03-05T23:00:00Z"), at("2023-03-08T23:00:00Z")),
      ],
      // 15-minute tracking lost after 03-11 20:00Z: ends 20:15Z, known 6 h later (03-12 02:00:01Z) → not yet
      [
        "zz-orphan-late",
        at("2023-03-11T01:00:00Z"),
        at("2023-03-11T20:15:00Z"),
        "orphan-tracking-removed",
        trace(at("2023-03-11T01:00:00Z"), at("2023-03-11T20:00:00Z")),
      ],
      // recovered inside the window (observed close: known at endedAt) → opened and closed
      [
        "zz-recovered",
        at("2023-03-11T03:00:00Z"),
        at("2023-03-11T05:00:00Z"),
        "recovered-primary",
        trace(at("2023-03-11T03:00:00Z"), at("2023-03-11T05:00:00Z")),
      ],
    ] as const;
    for (const [i, [id, started, ended, reason, tr]] of rows.entries())
      await conn.exec(
        `insert into depeg_events by name select ${9e14 + i} as id, $id as stablecoin_id, upper($id) as symbol, 'peggedUSD' as peg_type,
         'below' as direction, -300 as peak_deviation_bps, $started as started_at, $ended as ended_at, $reason as close_reason, $tr as trace_json`,
        { id, started, ended, reason, tr },
      );
    const d = await digestOf(conn);
    const ids = (list: DailyDigest["depegIncidents"]["opened"]) =>
      list.map((i) => i.stablecoinId).filter((x) => x.startsWith("zz-"));
    expect(ids(d.depegIncidents.opened)).toEqual(["zz-backdated-start", "zz-orphan-late", "zz-recovered"]);
    expect(ids(d.depegIncidents.closed)).toEqual(["zz-orphan-end", "zz-recovered"]);
    const byId = new Map([...d.depegIncidents.opened, ...d.depegIncidents.closed].map((i) => [i.stablecoinId, i]));
    expect(byId.get("zz-backdated-start")).toMatchObject({
      startedAt: at("2023-03-10T06:00:00Z"),
      startConfirmedAt: at("2023-03-11T12:00:00Z"),
    });
    expect(byId.get("zz-orphan-end")).toMatchObject({
      endedAt: at("2023-03-09T23:00:00Z"),
      endConfirmedAt: at("2023-03-11T23:00:00Z") + 1,
    });
    // an end not yet known at the window's end is not shown as ended
    expect(byId.get("zz-orphan-late")).toMatchObject({ endedAt: null, closeReason: null, endConfirmedAt: null });
    expect(byId.get("zz-recovered")).toMatchObject({ endConfirmedAt: at("2023-03-11T05:00:00Z") });
    expect(d.headline).toContain("ZZ-BACKDATED-START -300 bps since 2023-03-10 06:00Z");
  });
});
