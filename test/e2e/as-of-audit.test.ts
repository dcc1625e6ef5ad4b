import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { Db } from "../../build/duckdb.ts";
import {
  AsOfChecker,
  auditBuild,
  auditDuckDb,
  auditPublishedFiles,
  buildAsOfDay,
  type AuditBuild,
} from "../helpers/as-of-audit.ts";
import { checkAsOfValues, EARLY_HISTORY_SOURCES, freshnessProblems, partritaCheck } from "../helpers/as-of-values.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";

/**
 * As-of audit (issue 17, Deliver 8; value checks: issue 29 part 3): builds as of 2022-05-12 (UST's
 * collapse), 2023-03-13 (USDC's SVB depeg, with Binance 1-minute bars, stablesafe 15-minute bars and
 * on-chain samples inside the as-of day), 2025-09-07 (the recorded DefiLlama list), 2025-12-26 (the day
 * partrita's scrapes turn intraday) and 2026-09-03, and for each
 * - scans every published json/ndjson/csv file and every table of the build's `ballast.duckdb` for
 *   anything observed or dated after as-of (stamps);
 * - recomputes each recorded source's as-of view from its raw file (test/helpers/as-of-values.ts) and
 *   compares it with what the build published (values).
 * The sixth day, 2023-03-01, runs both in test/e2e/as-of-history.test.ts on that file's build (one
 * build per day keeps `make test` short).
 */

const DAYS = ["2022-05-12", "2023-03-13", "2025-09-07", "2025-12-26", "2026-09-03"] as const;
/** Sources that must have something ≤ as-of to compare at each day (the others may have none). */
const EXPECTED_SOURCES: Record<(typeof DAYS)[number], string[]> = {
  "2022-05-12": [...EARLY_HISTORY_SOURCES],
  // the early sources but partrita (not required on this day), plus Binance and StableSafe
  "2023-03-13": [
    ...EARLY_HISTORY_SOURCES.filter((x) => x !== "partrita stablecoin_marketcap.csv"),
    "binance-vision USDCUSDT 1m",
    "stablesafe data_usdc_large_depeg_2023.json",
  ],
  "2025-09-07": ["partrita stablecoin_marketcap.csv", "ECB eurofxref-hist.csv", "DefiLlama list 2025-09-07"],
  "2025-12-26": ["partrita stablecoin_marketcap.csv", "ECB eurofxref-hist.csv"],
  "2026-09-03": ["partrita stablecoin_marketcap.csv", "ECB eurofxref-hist.csv", "DefiLlama list 2026-09-02"],
};
const builds = new Map<string, AuditBuild>();
beforeAll(async () => {
  for (const day of DAYS) builds.set(day, await buildAsOfDay(day, `ballast-audit-${day}-`));
});

describe.each(DAYS)("build as of %s", (day) => {
  it("publishes nothing observed or dated after as-of (files and ballast.duckdb)", async () => {
    const build = must(builds.get(day), `the build as of ${day}`);
    expect(build.manifest.asOf).toBe(Date.parse(`${day}T00:00:00Z`) / 1000);
    const audit = await auditBuild(build);
    expect(audit.files).toBeGreaterThan(100);
    expect(audit.tables).toBeGreaterThan(30);
    expect(audit.columnsChecked).toBeGreaterThan(100);
    expect(audit.late).toEqual([]);
  });

  it("publishes each source's as-of view recomputed from its raw file (values)", async () => {
    const build = must(builds.get(day), `the build as of ${day}`);
    const checks = await checkAsOfValues(build);
    expect(checks.filter((c) => c.mismatches.length > 0)).toEqual([]);
    const compared = checks.filter((c) => c.checked > 0).map((c) => c.source);
    expect(compared).toEqual(expect.arrayContaining(EXPECTED_SOURCES[day]));
  });

  it("publishes no current figure past its source's freshness window (fresh or null)", async () => {
    expect(await freshnessProblems(must(builds.get(day), `the build as of ${day}`))).toEqual([]);
  });
});

describe("build as of 2025-12-26 (partrita's first intraday scrapes)", () => {
  it("publishes USDT's 00:00:00 scrape (186,791,970,834.22), not the 10:52:25Z one (186,796,642,842.90)", async () => {
    const build = must(builds.get("2025-12-26"), "the build as of 2025-12-26");
    const db = await Db.open(join(build.buildDir, "ballast.duckdb"), { access_mode: "READ_ONLY" });
    try {
      const rows = await db.all<{ date: string; usd: number; source: string }>(
        `select date::varchar as date, circulating_usd as usd, source from supply_history_daily
         where stablecoin_id = 'usdt-tether' and date >= '2025-12-25' order by date`,
      );
      // raw stablecoin_marketcap.csv: "2025-12-25 00:00:00.000,Tether,186793465675.51428",
      // "2025-12-26 00:00:00.000,Tether,186791970834.21866" (later rows that day: 01:18:47, 10:52:25)
      expect(rows).toEqual([
        { date: "2025-12-25", usd: 186793465675.51428, source: "coingecko-market-cap" },
        { date: "2025-12-26", usd: 186791970834.21866, source: "coingecko-market-cap" },
      ]);
    } finally {
      db.close();
    }
  });
});

describe("the value check (it can fail)", () => {
  it("flags a point that carries a scrape observed after it (the old reader's 10:52:25Z row for 2025-12-26)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ballast-values-probe-"));
    const db = await Db.open(join(dir, "probe.duckdb"));
    try {
      await db.exec(`create table registry_coins as select 'usdt-tether' as id, 'tether' as gecko_id;
        create table supply_history_daily as select * from (values
          ('usdt-tether', date '2025-12-25', 'peggedUSD', 186793465675.51428, 'coingecko-market-cap', 1.0),
          ('usdt-tether', date '2025-12-26', 'peggedUSD', 186796642842.89728, 'coingecko-market-cap', 1.0))
          t(stablecoin_id, date, peg_type, circulating_native, source, level_adjustment);
        create table price_consensus_slots (stablecoin_id varchar, slot_ts bigint, price double);`);
      const q = <T>(sql: string, params?: Record<string, unknown>) => db.all<T>(sql, params as never);
      const check = await partritaCheck(q, Date.parse("2025-12-26T00:00:00Z") / 1000);
      expect(check.checked).toBe(2);
      expect(check.mismatches).toEqual([
        "usdt-tether 2025-12-26: published 186796642842.89728, raw 186791970834.21866 ÷ 1 (scraped 2025-12-26T00:00:00.000Z)",
      ]);
    } finally {
      db.close();
    }
  });
});

describe("build as of 2022-05-12 (UST's collapse)", () => {
  it("opens UST's incident at the 0.754 prints of 2022-05-09 (a move, not a stuck quote) and keeps it open", async () => {
    const build = must(builds.get("2022-05-12"), "the build as of 2022-05-12");
    const { events } = JSON.parse(readFileSync(join(build.buildDir, "site-data/depeg-events.json"), "utf8")) as {
      events: { stablecoinId: string; startedAt: number; endedAt: number | null; direction: string }[];
    };
    const ust = events.filter((e) => e.stablecoinId === "ust-terraform-labs" && e.endedAt === null);
    expect(ust).toHaveLength(1);
    expect(ust[0].direction).toBe("below");
    expect(ust[0].startedAt).toBeLessThanOrEqual(Date.parse("2022-05-10T00:00:00Z") / 1000);
    expect(ust[0].startedAt).toBeGreaterThanOrEqual(Date.parse("2022-05-07T00:00:00Z") / 1000);
  });
});

describe("the audit scanner (it can fail)", () => {
  const asOf = Date.parse("2023-03-01T00:00:00Z") / 1000;
  const c = new AsOfChecker(asOf);

  it("flags later ISO dates and timestamps, and Unix s/ms under time keys, but not the as-of instant itself", () => {
    expect(c.lateIsoIn("2023-03-01")).toEqual([]); // D 00:00Z = as-of
    expect(c.lateIsoIn("2023-03-01T00:00:00Z")).toEqual([]);
    expect(c.lateIsoIn("x 2023-03-01T01:07:00Z y")).toEqual(["2023-03-01T01:07:00Z"]);
    expect(c.lateIsoIn("2023-03-02")).toEqual(["2023-03-02"]);
    // 2023-03-01T00:30+01:00 = 2023-02-28T23:30Z: before as-of
    expect(c.lateIsoIn("2023-03-01T00:30+01:00")).toEqual([]);
    const payload = {
      rows: [
        {
          date: "2023-02-28",
          observedAt: asOf + 1,
          startedAt: asOf,
          hourTs: (asOf + 3600) * 1000,
          peakDeviationBps: 2e9,
        },
      ],
      expiresAt: asOf + 86400,
    };
    // peakDeviationBps is no time key; expiresAt is forward-looking by definition
    expect(c.lateInJson(payload, "x.json")).toEqual([
      `.rows[0].observedAt=${asOf + 1}`,
      `.rows[0].hourTs=${(asOf + 3600) * 1000}`,
    ]);
    expect(c.lateInCsv("date,stablecoin_id,observed_at\n2023-02-28,a,1677628800\n2023-03-02,b,1677628801\n")).toEqual([
      "3:date=2023-03-02",
      "3:observed_at=1677628801",
    ]);
  });

  it("finds a late file and late DuckDB rows (DATE, time-named integers, JSON text)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ballast-audit-probe-"));
    writeFileSync(join(dir, "ok.json"), JSON.stringify({ date: "2023-02-28" }));
    writeFileSync(
      join(dir, "late.ndjson"),
      `${JSON.stringify({ ts: asOf - 60 })}\n${JSON.stringify({ ts: asOf + 60 })}\n`,
    );
    expect(auditPublishedFiles(dir, asOf)).toEqual({ files: 2, late: [`late.ndjson [1].ts=${asOf + 60}`] });
    const file = join(dir, "probe.duckdb");
    const db = await Db.open(file);
    await db.exec(`create table samples as select * from (values (date '2023-03-01', ${asOf + 4020}::bigint, 5::bigint, '{"endedAt": ${asOf + 60}}'),
      (date '2023-03-02', ${asOf}::bigint, 6::bigint, '{"note": "2023-02-01"}')) t(date, observed_at, supply, trace_json)`);
    db.close();
    const audit = await auditDuckDb(file, asOf);
    expect(audit.tables).toEqual(["samples"]);
    expect(audit.late).toEqual([
      "samples.date: 1 rows after as-of, max 2023-03-02",
      `samples.observed_at: 1 rows after as-of, max ${asOf + 4020}`,
      `samples.trace_json: 1 late values, e.g. .endedAt=${asOf + 60}`,
    ]);
  });
});

describe("build as of 2026-09-03: the 2026-09-02 list, not the 2025-09-07 one", () => {
  it("publishes USDT, USDe and USDG from the 2026-09-02 list (units = USD value / the list's price, at par)", async () => {
    const raw = JSON.parse(
      readFileSync(join(CAPTURE_DIR, "conorscode-open-defi-data/stablecoins.2026-09-02.json"), "utf8"),
    ) as { id: string; circulatingUsd: number | null; price: number | null }[];
    const expected = (llamaId: string) => {
      const r = must(
        raw.find((x) => x.id === llamaId && x.circulatingUsd && x.price),
        `list value of ${llamaId}`,
      );
      return Number(r.circulatingUsd) / Number(r.price);
    };
    const build = must(builds.get("2026-09-03"), "the build as of 2026-09-03");
    const db = await Db.open(join(build.buildDir, "ballast.duckdb"), { access_mode: "READ_ONLY" });
    try {
      const rows = await db.all<{ stablecoin_id: string; circulating_usd: number; supply_source: string }>(
        `select stablecoin_id, circulating_usd, supply_source, supply_date::varchar as supply_date from stablecoins
         where stablecoin_id in ('usdt-tether', 'usde-ethena', 'usdg-paxos') order by stablecoin_id`,
      );
      const by = Object.fromEntries(rows.map((r) => [r.stablecoin_id, r]));
      expect(by["usdt-tether"]).toMatchObject({ supply_source: "defillama", supply_date: "2026-09-02" });
      expect(by["usdt-tether"].circulating_usd).toBeCloseTo(expected("1"), 0); // 183.42 B (list: 183.35 B at 0.99961)
      expect(by["usde-ethena"].circulating_usd).toBeCloseTo(expected("146"), 0); // 4.23 B (2025-09-07 list: 12.78 B)
      expect(by["usdg-paxos"].circulating_usd).toBeCloseTo(expected("286"), 0); // 3.16 B (2025-09-07 list: 0.54 B)
      // non-USD pegs: the list carries no supply for them; their older points are past their window
      const [eurc] = await db.all<Record<string, unknown>>(
        "select circulating_usd, supply_unavailable_reason from stablecoins where stablecoin_id = 'eurc-circle'",
      );
      expect(eurc.circulating_usd).toBeNull();
      expect(["stale-beyond-window", "no-observation"]).toContain(eurc.supply_unavailable_reason);
    } finally {
      db.close();
    }
  });
});
