import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { Db } from "../../build/duckdb.ts";
import { deathKnownOn } from "../../build/stages/load.ts";
import { loadRegistry } from "../../pipelines/registry/registry.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { auditBuild, buildAsOfDay } from "../helpers/as-of-audit.ts";
import { checkAsOfValues, EARLY_HISTORY_SOURCES, freshnessProblems } from "../helpers/as-of-values.ts";
import { must } from "../helpers/must.ts";

/**
 * A build as of 2023-03-01: no DefiLlama list capture was observed before 2025-09-07, so the current
 * state comes from the supply history (as-of fallback), and nothing observed or dated after as-of may
 * reach a published byte.
 */
const AS_OF = Date.parse("2023-03-01T00:00:00Z") / 1000;
const AS_OF_DAY = "2023-03-01";

let dir: string;
let manifest: BuildManifest;
let buildDir: string;
beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  ({ dir, buildDir, manifest } = await buildAsOfDay(AS_OF_DAY));
});

describe("build as of 2023-03-01 (no list capture yet)", () => {
  it("publishes, warning that the current state comes from the supply history", () => {
    expect(manifest.asOf).toBe(AS_OF);
    expect(manifest.warnings.some((w) => /no capture observed at or before as-of/.test(w))).toBe(true);
  });

  it("lists coins from their latest supply-history point ≤ as-of with a documented supplySource", () => {
    const list = JSON.parse(readFileSync(join(buildDir, "site-data/stablecoins.json"), "utf8"));
    const ids = list.peggedAssets.map((a: { id: string }) => a.id);
    expect(ids).toEqual(expect.arrayContaining(["usdt-tether", "usdc-circle"]));
    expect(list.peggedAssets.length).toBeGreaterThan(0);
    const summaryById = JSON.parse(readFileSync(join(buildDir, "site-data/stablecoin-summary.json"), "utf8"));
    for (const a of list.peggedAssets) {
      if (a.supplySource === undefined) {
        // priced before its supply is known: listed with its price, no circulating buckets, and the reason
        expect(a.circulating).toEqual({});
        expect(summaryById[a.id].currentUnavailableReason).toBe("supply-buckets-missing");
        continue;
      }
      expect(["defillama", "defillama-history-gap-fill", "coingecko-fallback"]).toContain(a.supplySource);
      expect(a.circulating.peggedUSD).toBeGreaterThan(0);
    }
    const usdc = list.peggedAssets.find((a: { id: string }) => a.id === "usdc-circle");
    expect(usdc.supplySource).toBe("defillama-history-gap-fill");
    expect(Object.keys(usdc.chainCirculating).length).toBeGreaterThan(5); // per-chain from DefiLlama detail history
    expect(usdc.circulatingPrevDay.peggedUSD).toBeGreaterThan(0);
    const summary = JSON.parse(readFileSync(join(buildDir, "site-data/stablecoin-summary.json"), "utf8"));
    expect(summary["usdt-tether"].supplyUsd.change7d).not.toBeNull();
  });

  it("prices every coin from the consensus history at as-of: USDT, USDC and DAI priced, scored and graded", async () => {
    const list = JSON.parse(readFileSync(join(buildDir, "site-data/stablecoins.json"), "utf8"));
    const db = await Db.open(join(buildDir, "ballast.duckdb"), { access_mode: "READ_ONLY" });
    let slots: { stablecoin_id: string; price: number; slot_ts: number }[];
    try {
      // the consensus of each coin's last slot at or before as-of, within the week before it
      slots = await db.all(
        "select stablecoin_id, price, slot_ts::double as slot_ts from price_consensus_slots where slot_ts <= $asOf and slot_ts > $asOf - 7 * 86400 and price is not null qualify row_number() over (partition by stablecoin_id order by slot_ts desc) = 1",
        { asOf: AS_OF },
      );
    } finally {
      db.close();
    }
    expect(slots.length).toBeGreaterThanOrEqual(15);
    const priced = list.peggedAssets.filter((a: { price: number | null }) => typeof a.price === "number");
    expect(priced.length).toBeGreaterThanOrEqual(15);
    const peg = JSON.parse(readFileSync(join(buildDir, "site-data/peg-summary.json"), "utf8")).coins as {
      id: string;
      pegScore: number | null;
    }[];
    const cards = JSON.parse(readFileSync(join(buildDir, "site-data/report-cards.json"), "utf8")).cards as {
      id: string;
      overallGrade: string;
    }[];
    for (const id of ["usdt-tether", "usdc-circle", "dai-sky"]) {
      const coin = list.peggedAssets.find((a: { id: string }) => a.id === id);
      const slot = must(
        slots.find((s) => s.stablecoin_id === id),
        `${id}'s last consensus slot`,
      );
      expect(Math.abs(coin.price / slot.price - 1)).toBeLessThan(0.005);
      expect(coin.priceObservedAt).toBeLessThanOrEqual(AS_OF);
      expect(
        must(
          peg.find((c) => c.id === id),
          `${id} in peg-summary`,
        ).pegScore,
      ).toBeGreaterThan(0);
      expect(
        must(
          cards.find((c) => c.id === id),
          `${id} in report-cards`,
        ).overallGrade,
      ).toMatch(/^[A-D][+-]?$|^F$/);
    }
  });

  it("publishes nothing observed or dated after as-of: every json/ndjson/csv file and every ballast.duckdb table (as-of audit)", async () => {
    const audit = await auditBuild({ dir, buildDir, manifest });
    expect(audit.files).toBeGreaterThan(100);
    expect(audit.tables).toBeGreaterThan(30);
    expect(audit.columnsChecked).toBeGreaterThan(100);
    expect(audit.late).toEqual([]);
  });

  it("publishes each source's as-of view recomputed from its raw file (as-of audit, values)", async () => {
    const checks = await checkAsOfValues({ dir, buildDir, manifest });
    expect(checks.filter((c) => c.mismatches.length > 0)).toEqual([]);
    expect(checks.filter((c) => c.checked > 0).map((c) => c.source)).toEqual(
      expect.arrayContaining([...EARLY_HISTORY_SOURCES]),
    );
  });

  it("publishes no current figure past its source's freshness window (fresh or null)", async () => {
    expect(await freshnessProblems({ dir, buildDir, manifest })).toEqual([]);
  });

  it("keeps on-chain supply samples observed later on the as-of day out (block time, not its UTC day)", async () => {
    const db = await Db.open(join(buildDir, "ballast.duckdb"), { access_mode: "READ_ONLY" });
    try {
      const [r] = await db.all<{ n: number; last: number }>(
        "select count(*)::integer as n, max(observed_at)::integer as last from chain_supply_samples",
      );
      expect(r.n).toBeGreaterThan(0);
      expect(r.last).toBeLessThanOrEqual(AS_OF);
      expect(r.last).toBeGreaterThan(AS_OF - 86400); // samples every 5,000 blocks (~4 h on BSC): the day before is there
    } finally {
      db.close();
    }
  });

  it("values EUR pegs at the ECB rate published before as-of (2023-02-28's, not 2023-03-01's fixed at ~16:00 Berlin)", async () => {
    const db = await Db.open(join(buildDir, "ballast.duckdb"), { access_mode: "READ_ONLY" });
    try {
      const [fx] = await db.all<{ date: string; published_at: number }>(
        "select date::varchar as date, published_at::integer as published_at from fx_rates_daily where currency = 'EUR' order by date desc limit 1",
      );
      expect(fx.date).toBe("2023-02-28");
      expect(fx.published_at).toBe(Date.parse("2023-02-28T15:00:00Z") / 1000); // 16:00 CET
    } finally {
      db.close();
    }
  });

  it("flags no coin dead whose death was not known on the as-of day", async () => {
    const deadAfter = new Set(
      loadRegistry()
        .coins.filter((c) => {
          const known = deathKnownOn(c.deadFrom);
          return known !== null && known > AS_OF_DAY;
        })
        .map((c) => c.id),
    );
    expect(deadAfter.size).toBeGreaterThan(0);
    const cemetery = JSON.parse(readFileSync(join(buildDir, "datasets/stablecoin-cemetery.json"), "utf8")) as {
      id: string;
      deathDate: string | null;
    }[];
    expect(cemetery.filter((c) => deadAfter.has(c.id))).toEqual([]);
    expect(cemetery.length).toBeGreaterThan(0);
    for (const c of cemetery) expect(c.deathDate === null || c.deathDate <= AS_OF_DAY).toBe(true);
    const db = await Db.open(join(buildDir, "ballast.duckdb"), { access_mode: "READ_ONLY" });
    try {
      const flagged = await db.all<{ id: string }>(
        "select id from registry_coins where is_dead or dead_from is not null order by id",
      );
      expect(flagged.filter((r) => deadAfter.has(r.id))).toEqual([]);
      const listedDead = await db.all<{ stablecoin_id: string }>(
        "select stablecoin_id from stablecoins where is_dead order by 1",
      );
      expect(listedDead.filter((r) => deadAfter.has(r.stablecoin_id))).toEqual([]);
    } finally {
      db.close();
    }
  });
});
