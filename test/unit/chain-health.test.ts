/**
 * Chain health (`ballast-chain-health-v1`, mart pipelines/models/marts/chain_health.sql) run on a small
 * hand-made set of input tables in an in-memory DuckDB, against values worked out by hand from the
 * documented formula (docs/methodology/risk.md "Chain health", the mart's header):
 *   score = round(0.30 quality + 0.20 environment + 0.20 concentration + 0.20 peg + 0.10 diversity)
 * Every expected number below is derived in its comment.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../build/config.ts";
import { Db } from "../../build/duckdb.ts";
import { CHAIN_HEALTH_METHODOLOGY_VERSION } from "../../pipelines/analytics/chain-health.version.ts";

const SQL = readFileSync(join(REPO_ROOT, "pipelines/models/marts/chain_health.sql"), "utf8");

interface Row {
  chain_id: string;
  health_score: number | null;
  health_band: string | null;
  quality: number | null;
  chain_environment: number;
  concentration: number | null;
  peg_stability: number;
  backing_diversity: number;
  rated_share: number | null;
  chain_tier: string | null;
  chain_environment_basis: string;
  health_unavailable_reason: string | null;
  methodology_version: string;
}

let db: Db;
let rows: Map<string, Row>;
beforeAll(async () => {
  db = await Db.open(":memory:", { threads: "1" });
  await db.exec(`
    create table chain_supply (chain_id varchar);
    create table stablecoin_chain_supply (stablecoin_id varchar, chain_id varchar, circulating_usd double);
    create table registry_chains (id varchar, tier varchar);
    create table report_cards (stablecoin_id varchar, safety_score double);
    create table peg_scores (stablecoin_id varchar, current_deviation_bps double);
    create table registry_coins (id varchar, risk_json varchar, peg_mechanism varchar);
    insert into chain_supply values ('alpha'), ('beta'), ('gamma'), ('delta'), ('epsilon');
    insert into registry_chains values ('alpha', 'ethereum'), ('gamma', 'unproven'), ('delta', 'stage1-l2'), ('epsilon', 'mature-alt-l1');
    -- a: rated 90, 10 bps off, fiat reserves (rwa); b: rated 70, −50 bps, over-collateralised (crypto);
    -- c: unrated, no judged price, no risk facts but an algorithmic peg mechanism (crypto);
    -- d: rated 30, 600 bps off, risk backing hybrid → falls back to peg mechanism fiat-backed (rwa).
    insert into report_cards values ('a', 90), ('b', 70), ('d', 30);
    insert into peg_scores values ('a', 10), ('b', -50), ('d', 600);
    insert into registry_coins values
      ('a', '{"backing":"fiat-reserves"}', 'fiat-backed'),
      ('b', '{"backing":"crypto-overcollateralized"}', 'crypto-backed'),
      ('c', null, 'algorithmic'),
      ('d', '{"backing":"hybrid"}', 'fiat-backed');
    insert into stablecoin_chain_supply values
      ('a', 'alpha', 600), ('b', 'alpha', 400),
      ('a', 'beta', 900), ('c', 'beta', 100),
      ('c', 'gamma', 300), ('a', 'gamma', 100),
      ('a', 'delta', 0), ('b', 'delta', -5),
      ('d', 'epsilon', 500);
  `);
  // Decimal literals (100.0, 50.0) come back from DuckDB as strings: compared as doubles here.
  const numeric = ["chain_environment", "peg_stability", "backing_diversity"]
    .map((c) => `cast(${c} as double) as ${c}`)
    .join(", ");
  rows = new Map((await db.all<Row>(`select * replace (${numeric}) from (${SQL})`)).map((r) => [r.chain_id, r]));
});
afterAll(() => db?.close());

describe("chain health on hand-made inputs", () => {
  it("one row per chain of chain_supply, stamped with the methodology version", () => {
    expect([...rows.keys()]).toEqual(["alpha", "beta", "delta", "epsilon", "gamma"]);
    for (const r of rows.values()) expect(r.methodology_version).toBe(CHAIN_HEALTH_METHODOLOGY_VERSION);
  });

  it("alpha (ethereum tier; a $600 + b $400): 83 robust", () => {
    // quality = (90 × 600 + 70 × 400) / 1000 = (54,000 + 28,000) / 1000 = 82
    // environment: ethereum → 100
    // HHI = 0.6² + 0.4² = 0.36 + 0.16 = 0.52 → concentration = round(100 × 0.48) = 48
    // peg: a 100 − 10/5 = 98, b 100 − 50/5 = 90 → (98 × 600 + 90 × 400) / 1000 = (58,800 + 36,000) / 1000 = 94.8
    // diversity: rwa 0.6, crypto 0.4 → −(0.6 ln 0.6 + 0.4 ln 0.4) / ln 2 = (0.306495 + 0.366516) / 0.693147
    //   = 0.970951 → 0.9710 (4 dp) × 100 = 97.1
    // score = 0.3 × 82 + 0.2 × 100 + 0.2 × 48 + 0.2 × 94.8 + 0.1 × 97.1 = 24.6 + 20 + 9.6 + 18.96 + 9.71 = 82.87 → 83
    expect(rows.get("alpha")).toMatchObject({
      quality: 82,
      chain_environment: 100,
      concentration: 48,
      peg_stability: 94.8,
      backing_diversity: 97.1,
      rated_share: 1,
      health_score: 83,
      health_band: "robust",
      chain_tier: "ethereum",
      chain_environment_basis: "curated-tier",
      health_unavailable_reason: null,
    });
  });

  it("beta (no curated tier; a $900 + unrated c $100 without a judged price): 64 healthy", () => {
    // rated share = 900 / 1000 = 0.9 ≥ 0.5; quality = 90 × 900 / 900 = 90
    // environment: no tier → 50 (unknown-tier)
    // HHI = 0.9² + 0.1² = 0.82 → concentration = round(18) = 18
    // peg: a 98, c 50 (no judged price) → (98 × 900 + 50 × 100) / 1000 = (88,200 + 5,000) / 1000 = 93.2
    // diversity: rwa 0.9 (a), crypto 0.1 (c by peg mechanism) → −(0.9 ln 0.9 + 0.1 ln 0.1) / ln 2
    //   = (0.0948245 + 0.2302585) / 0.693147 = 0.468996 → 0.4690 × 100 = 46.9
    // score = 0.3 × 90 + 0.2 × 50 + 0.2 × 18 + 0.2 × 93.2 + 0.1 × 46.9 = 27 + 10 + 3.6 + 18.64 + 4.69 = 63.93 → 64
    expect(rows.get("beta")).toMatchObject({
      quality: 90,
      chain_environment: 50,
      concentration: 18,
      peg_stability: 93.2,
      backing_diversity: 46.9,
      rated_share: 0.9,
      health_score: 64,
      health_band: "healthy",
      chain_tier: null,
      chain_environment_basis: "unknown-tier",
      health_unavailable_reason: null,
    });
  });

  it("gamma (unproven; rated share 25%): no quality, no score", () => {
    // rated = a $100 of $400 → 0.25 < 0.5: quality null, score null, band null
    // HHI = 0.75² + 0.25² = 0.5625 + 0.0625 = 0.625 → concentration = round(37.5) = 38 (half away from zero)
    // peg: c 50, a 98 → (50 × 300 + 98 × 100) / 400 = (15,000 + 9,800) / 400 = 62
    // diversity: rwa 0.25 (a), crypto 0.75 (c) → −(0.25 ln 0.25 + 0.75 ln 0.75) / ln 2
    //   = (0.346574 + 0.215762) / 0.693147 = 0.811278 → 0.8113 × 100 = 81.13
    expect(rows.get("gamma")).toMatchObject({
      quality: null,
      health_score: null,
      health_band: null,
      rated_share: 0.25,
      health_unavailable_reason: "rated-share-below-50pct",
      chain_environment: 0,
      concentration: 38,
      peg_stability: 62,
      backing_diversity: 81.13,
    });
  });

  it("delta (stage1-l2; only zero or negative supply): no supply", () => {
    // Non-positive supply is left out, so the chain has none: quality and concentration null, peg 50, diversity 0.
    expect(rows.get("delta")).toMatchObject({
      quality: null,
      health_score: null,
      health_band: null,
      rated_share: null,
      health_unavailable_reason: "no-supply",
      chain_environment: 66,
      concentration: null,
      peg_stability: 50,
      backing_diversity: 0,
    });
  });

  it("epsilon (mature-alt-l1; one coin, 600 bps off): 18 concentrated", () => {
    // quality 30; environment 45; one coin: HHI 1 → concentration 0
    // peg = max(0, 100 − 600/5) = max(0, −20) = 0
    // diversity: d is "hybrid" → peg mechanism fiat-backed → rwa only: one cohort → 0
    // score = 0.3 × 30 + 0.2 × 45 + 0 + 0 + 0 = 9 + 9 = 18 → concentrated (< 20)
    expect(rows.get("epsilon")).toMatchObject({
      quality: 30,
      chain_environment: 45,
      concentration: 0,
      peg_stability: 0,
      backing_diversity: 0,
      health_score: 18,
      health_band: "concentrated",
    });
  });
});
