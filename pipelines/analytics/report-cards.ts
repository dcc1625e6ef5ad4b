import { dependencyOrder, effectiveExitScore, legacyCard, safetyScore } from "./safety-score.ts";
import type { RiskFacts } from "../registry/schema.ts";
import { type Analytic, groupByCoin, inputsAs, type RegistryCoinRow } from "./contract.ts";
import { thresholdBps } from "./depeg-detection.ts";
import { pegScoreUnavailableReason } from "./peg-summary.ts";
import { pegScore, type ScoredIncident } from "./peg-score.ts";
import {
  GOVERNANCE_QUALITY,
  type RawInputs,
  REDEMPTION_ROUTE,
  REPORT_CARD_VERSION,
  SAFETY_SCORE_VERSION,
} from "./safety-score.version.ts";
import { must } from "../../lib/must.ts";

/**
 * Report cards and safety scores of every tracked coin — every listed coin plus every registry coin dead
 * at as-of (graded F as defunct) — (DAG node `report_cards`), their daily history
 * and the dependency graph. Pure: reads the registry (curated `risk` facts, death dates), peg scores
 * and incidents, price-consensus days, daily supply and matched Bluechip grades (descriptive only, not
 * scored); grades each coin with
 * {@link safetyScore} and {@link legacyCard} from one `rawInputs` object (published with the card, so
 * every grade can be recomputed from it). Coins are graded in dependency order (upstream first), so a
 * dependent's `rawInputs.dependencies` carry its upstreams' final scores.
 *
 * History (`safety_score_history`): the safety score of each listed coin for every UTC day (00:00) from
 * its first priced day (at most 3650 days before as-of) to as-of, recomputed from what was known on
 * that day — incidents started by then (an incident still open then counts as open, with the worst
 * deviation seen so far), priced days in the 4-year window, supply of that day, deaths known by then —
 * and today's registry facts (facts carry no dates yet). Rows are written when the grade or score
 * changes (the first row is the seed: prev null); the as-of row is the published card itself.
 * `publication_kind`: `backfill` (recomputed by this build) or `published` (this build's as-of).
 */
/** A coin row of the report cards' `coins` select. */
type CoinRow = Pick<
  RegistryCoinRow,
  "id" | "symbol" | "name" | "peg_type" | "nav_token" | "floating_peg" | "is_dead" | "death_known_on" | "risk_json"
> & { circulating_usd: number | null };
/** A coin row with its parsed risk facts. */
type Coin = CoinRow & { risk: RiskFacts | null };
/** An incident row (`incidents` select; times Unix s, peak in bps). */
type IncidentRow = { stablecoin_id: string; started_at: number; ended_at: number | null; peak: number; n: number };
/** A priced day of a coin (`days` select: days since the epoch, worst |deviation| in bps). */
type PricedDayRow = { stablecoin_id: string; day: number; worst_bps: number };
/** A supply day of a coin (`supply` select: days since the epoch, USD). */
type SupplyDayRow = { stablecoin_id: string; day: number; circulating_usd: number };
/** A `dex` row: rounded liquidity score and HHI. */
type DexRow = { stablecoin_id: string; score: number; hhi: number | null };
/** A `backstops` row of `redemption_backstops`. */
type BackstopRow = {
  stablecoin_id: string;
  score: number | null;
  route_family: string | null;
  model_confidence: string | null;
  immediate_capacity_usd: number | null;
  immediate_capacity_ratio: number | null;
};

/** Input rows of the report cards node (columns of its selects). */
type ReportCardsInputs = {
  coins: CoinRow;
  peg: {
    stablecoin_id: string;
    peg_score: number | null;
    peg_score_unavailable_reason: string | null;
    priced_days: number | null;
    current_deviation_bps: number | null;
    event_count: number | null;
    last_event_at: number | null;
    observation_started_at: number | null;
    price: number | null;
  };
  incidents: IncidentRow;
  days: PricedDayRow;
  supply: SupplyDayRow;
  bluechip: { stablecoin_id: string; grade: string };
  dex: DexRow;
  backstops: BackstopRow;
};

export const reportCards: Analytic = {
  name: "report_cards",
  layer: "marts",
  inputs: {
    coins: `select c.id, c.symbol, c.name, c.peg_type, c.nav_token, c.floating_peg, c.is_dead, c.death_known_on, c.risk_json,
          s.circulating_usd
        from registry_coins c left join int_coins_supply_current s on s.stablecoin_id = c.id
        where s.stablecoin_id is not null or c.is_dead order by c.id`,
    peg: `select stablecoin_id, peg_score::integer as peg_score, peg_score_unavailable_reason, priced_days::integer as priced_days,
          current_deviation_bps::integer as current_deviation_bps, event_count::integer as event_count, last_event_at::integer as last_event_at,
          observation_started_at::integer as observation_started_at, price
        from peg_scores order by stablecoin_id`,
    incidents: `select stablecoin_id, started_at::integer as started_at, ended_at::integer as ended_at, peak_deviation_bps::integer as peak,
          constituent_event_count::integer as n from depeg_incidents order by stablecoin_id, started_at, id`,
    days: `select stablecoin_id, ((slot_ts - 1) // 86400)::integer as day, max(abs(deviation_bps))::integer as worst_bps
        from price_consensus_slots where price is not null group by all order by stablecoin_id, day`,
    supply: `select h.stablecoin_id, (epoch(h.date) // 86400)::integer as day, h.circulating_usd
        from int_supply_daily h inner join registry_coins c on c.id = h.stablecoin_id
        where c.risk_json is not null and h.rejection_reason is null and h.circulating_usd is not null order by h.stablecoin_id, day`,
    bluechip:
      "select stablecoin_id, grade from bluechip_ratings where stablecoin_id is not null order by stablecoin_id",
    dex: "select stablecoin_id, round(liquidity_score)::integer as score, hhi from dex_liquidity where liquidity_score is not null order by stablecoin_id",
    backstops: `select stablecoin_id, score::integer as score, route_family, model_confidence, immediate_capacity_usd, immediate_capacity_ratio
        from redemption_backstops order by stablecoin_id`,
  },
  outputs: {
    report_cards: {
      stablecoin_id: "VARCHAR",
      symbol: "VARCHAR",
      name: "VARCHAR",
      safety_score: "BIGINT",
      safety_grade: "VARCHAR",
      safety_json: "VARCHAR",
      report_card_score: "BIGINT",
      report_card_grade: "VARCHAR",
      report_card_json: "VARCHAR",
      raw_inputs_json: "VARCHAR",
      is_defunct: "BOOLEAN",
      coverage_class: "VARCHAR",
      methodology_version: "VARCHAR",
      report_card_methodology_version: "VARCHAR",
    },
    safety_score_history: {
      stablecoin_id: "VARCHAR",
      symbol: "VARCHAR",
      date: "BIGINT",
      grade: "VARCHAR",
      score: "BIGINT",
      prev_grade: "VARCHAR",
      prev_score: "BIGINT",
      methodology_version: "VARCHAR",
      publication_kind: "VARCHAR",
    },
    dependency_edges: { from_id: "VARCHAR", to_id: "VARCHAR", weight: "DOUBLE", type: "VARCHAR" },
  },
  run(selected, { asOf }) {
    const inputs = inputsAs<ReportCardsInputs>(selected);
    const asOfDay = Math.floor(asOf / 86400);
    // One card per id: a duplicated registry record (which the marts' asserts reject) must not multiply the daily history work.
    const seen = new Set<string>();
    const coins = inputs.coins
      .filter((c) => !seen.has(c.id) && seen.add(c.id))
      .map((c): Coin => ({ ...c, risk: c.risk_json ? JSON.parse(c.risk_json) : null }));
    const byId = new Map(coins.map((c) => [c.id, c]));
    const coinOf = (id: string) => must(byId.get(id), `coin ${id}`);
    const peg = new Map(inputs.peg.map((r) => [r.stablecoin_id, r]));
    const incidents = groupByCoin(inputs.incidents);
    const days = groupByCoin(inputs.days);
    const supply = groupByCoin(inputs.supply);
    const bluechip = new Map(inputs.bluechip.map((r) => [r.stablecoin_id, r.grade]));
    const dex = new Map(inputs.dex.map((r) => [r.stablecoin_id, r]));
    const backstops = new Map(inputs.backstops.map((r) => [r.stablecoin_id, r]));
    const order = dependencyOrder(
      coins.map((c) => ({
        id: c.id,
        deps: (c.risk?.dependencies ?? []).map((d) => d.id).filter((id) => byId.has(id)),
      })),
    );

    // Current cards, upstream first.
    const current = new Map<
      string,
      { safety: ReturnType<typeof safetyScore>; legacy: ReturnType<typeof legacyCard>; raw: RawInputs }
    >();
    for (const id of order) {
      const c = coinOf(id);
      const p = peg.get(id);
      const open = (incidents.get(id) ?? []).filter((e) => e.ended_at === null && e.started_at <= asOf);
      const openBps = open.length ? Math.max(...open.map((e) => Math.abs(e.peak))) : null;
      const cur = p?.current_deviation_bps ?? null;
      const beyond = cur !== null && Math.abs(cur) >= thresholdBps(c.peg_type) ? Math.abs(cur) : null;
      const raw = rawInputs(
        c,
        {
          pegScore: p?.peg_score ?? null,
          pegScoreUnavailableReason: p?.peg_score_unavailable_reason ?? "no-price",
          pricedDays: p?.priced_days ?? 0,
          hasCurrentPrice: p?.price !== null && p?.price !== undefined,
          activeDepeg: open.length > 0,
          activeDepegBps: maxOrNull(openBps, beyond),
          currentDeviationBps: cur,
          depegEventCount: p?.event_count ?? 0,
          lastEventAt: p?.last_event_at ?? null,
          circulatingUsd: c.circulating_usd ?? null,
          isDefunct: Boolean(c.is_dead),
          bluechipGrade: bluechip.get(id) ?? null,
          ...markets(dex.get(id), backstops.get(id)),
        },
        (up) => {
          const u = current.get(up);
          return u && { safety: u.safety.score, legacy: u.legacy.overallScore };
        },
      );
      current.set(id, { safety: safetyScore(raw), legacy: legacyCard(raw), raw });
    }

    // Every coin got its current card above (dependencyOrder returns every id).
    const currentOf = (id: string) => must(current.get(id), `current card of ${id}`);
    const cards = coins.map((c) => {
      const { safety, legacy, raw } = currentOf(c.id);
      return {
        stablecoin_id: c.id,
        symbol: c.symbol,
        name: c.name,
        safety_score: safety.score,
        safety_grade: safety.grade,
        safety_json: JSON.stringify(safety),
        report_card_score: legacy.overallScore,
        report_card_grade: legacy.overallGrade,
        report_card_json: JSON.stringify(legacy),
        raw_inputs_json: JSON.stringify(raw),
        is_defunct: raw.isDefunct,
        coverage_class: coverageClass(raw, safety.grade),
        methodology_version: SAFETY_SCORE_VERSION,
        report_card_methodology_version: REPORT_CARD_VERSION,
      };
    });

    // Daily history, every coin upstream first within a day.
    const history: {
      stablecoin_id: string;
      symbol: string;
      date: number;
      grade: string;
      score: number | null;
      prev_grade: string | null;
      prev_score: number | null;
      methodology_version: string;
      publication_kind: string;
    }[] = [];
    const first = new Map(coins.map((c) => [c.id, days.get(c.id)?.[0]?.day ?? asOfDay]));
    const startDay = Math.max(asOfDay - 3650, Math.min(...first.values()));
    const last = new Map<string, { grade: string; score: number | null }>();
    const cursor = new Map<string, Cursor>(coins.map((c) => [c.id, { supply: 0, days: 0, window: 0 }]));
    const push = (c: Coin, date: number, grade: string, score: number | null, kind: string) => {
      const prev = last.get(c.id);
      if (prev && prev.grade === grade && prev.score === score) return;
      history.push({
        stablecoin_id: c.id,
        symbol: c.symbol,
        date,
        grade,
        score,
        prev_grade: prev?.grade ?? null,
        prev_score: prev?.score ?? null,
        methodology_version: SAFETY_SCORE_VERSION,
        publication_kind: kind,
      });
      last.set(c.id, { grade, score });
    };
    for (let day = startDay; day < asOfDay; day++) {
      const t = day * 86400;
      const scores = new Map<string, Upstream>();
      for (const id of order) {
        if (day < (first.get(id) ?? asOfDay)) continue;
        const c = coinOf(id);
        const dead = c.death_known_on !== null && c.death_known_on <= new Date(t * 1000).toISOString().slice(0, 10);
        if (!c.risk || dead) {
          scores.set(id, { safety: dead ? 0 : null, legacy: null });
          push(c, t, dead ? "F" : "NR", dead ? 0 : null, "backfill");
          continue;
        }
        const s = safetyScore(
          historicalRaw(
            c,
            day,
            incidents.get(id) ?? [],
            days.get(id) ?? [],
            supply.get(id) ?? [],
            must(cursor.get(id), `history cursor of ${id}`),
            (up) => scores.get(up),
          ),
        );
        scores.set(id, { safety: s.score, legacy: null });
        push(c, t, s.grade, s.score, "backfill");
      }
    }
    for (const c of coins) {
      const { safety } = currentOf(c.id);
      push(c, asOfDay * 86400, safety.grade, safety.score, "published");
    }
    history.sort((a, b) =>
      a.stablecoin_id < b.stablecoin_id ? -1 : a.stablecoin_id > b.stablecoin_id ? 1 : a.date - b.date,
    );

    const edges = coins
      .flatMap((c) =>
        (c.risk?.dependencies ?? []).map((d) => ({ from_id: d.id, to_id: c.id, weight: d.weight, type: d.type })),
      )
      .sort((a, b) => (a.from_id + a.to_id < b.from_id + b.to_id ? -1 : 1));
    return { tables: { report_cards: cards, safety_score_history: history, dependency_edges: edges } };
  },
};

/** Time-varying inputs of one coin's grade. */
type Observed = Pick<
  RawInputs,
  | "pegScore"
  | "pegScoreUnavailableReason"
  | "pricedDays"
  | "hasCurrentPrice"
  | "activeDepeg"
  | "activeDepegBps"
  | "currentDeviationBps"
  | "depegEventCount"
  | "lastEventAt"
  | "circulatingUsd"
  | "isDefunct"
  | "bluechipGrade"
> &
  Partial<Markets>;

/** Market inputs of a coin: DEX liquidity (score, HHI) and its redemption backstop, when published. */
type Markets = Pick<
  RawInputs,
  | "liquidityScore"
  | "concentrationHhi"
  | "redemptionBackstopScore"
  | "redemptionRouteFamily"
  | "redemptionModelConfidence"
  | "redemptionUsedForLiquidity"
  | "redemptionImmediateCapacityUsd"
  | "redemptionImmediateCapacityRatio"
>;

function markets(dex: DexRow | undefined, backstop: BackstopRow | undefined): Markets {
  return {
    liquidityScore: dex?.score ?? null,
    concentrationHhi: dex?.hhi ?? null,
    redemptionBackstopScore: backstop?.score ?? null,
    redemptionRouteFamily: backstop?.route_family ?? null,
    redemptionModelConfidence: backstop?.model_confidence ?? null,
    redemptionUsedForLiquidity: backstop?.score !== null && backstop?.score !== undefined,
    redemptionImmediateCapacityUsd: backstop?.immediate_capacity_usd ?? null,
    redemptionImmediateCapacityRatio: backstop?.immediate_capacity_ratio ?? null,
  };
}

/** Final scores of an upstream coin (null: NR or not computed). */
type Upstream = { safety: number | null; legacy: number | null };
/** Forward-only positions in one coin's sorted supply and priced-day rows, and the 4-year window's start in the latter. */
type Cursor = { supply: number; days: number; window: number };

/** rawInputs of coin `c` from its observed inputs, its registry facts and its upstreams' scores. */
function rawInputs(c: Coin, o: Observed, upstream: (id: string) => Upstream | undefined): RawInputs {
  const f = c.risk;
  const m: Markets = {
    liquidityScore: null,
    concentrationHhi: null,
    redemptionBackstopScore: null,
    redemptionModelConfidence: null,
    redemptionUsedForLiquidity: false,
    redemptionImmediateCapacityUsd: null,
    redemptionImmediateCapacityRatio: null,
    ...o,
    redemptionRouteFamily: o.redemptionRouteFamily ?? (f ? REDEMPTION_ROUTE[f.backing].family : null),
  };
  return {
    ...o,
    ...m,
    effectiveExitScore: effectiveExitScore(
      f?.backing ?? null,
      o.circulatingUsd,
      m.liquidityScore,
      m.redemptionBackstopScore,
    ),
    canBeBlacklisted: f?.canBeBlacklisted ?? null,
    chainTier: f?.chainTier ?? null,
    deploymentModel: f?.deploymentModel ?? null,
    backing: f?.backing ?? null,
    collateralQuality: f?.collateralQuality ?? null,
    custodyModel: f?.custodyModel ?? null,
    proofOfReserves: f?.proofOfReserves ?? null,
    governanceTier: f?.governance ?? null,
    governanceQuality: f ? GOVERNANCE_QUALITY[f.governance] : null,
    dependencies: (f?.dependencies ?? []).map((d) => {
      const u = upstream(d.id);
      return {
        id: d.id,
        weight: d.weight,
        type: d.type,
        upstreamSafetyScore: u?.safety ?? null,
        upstreamReportCardScore: u?.legacy ?? null,
      };
    }),
    navToken: Boolean(c.nav_token),
    floatingPeg: Boolean(c.floating_peg),
  };
}

/**
 * rawInputs of coin `c` as known at 00:00 UTC of `day` (days since the epoch). `cur` holds forward-only
 * cursors into the coin's sorted supply and priced-day rows (days are visited in ascending order).
 */
function historicalRaw(
  c: Coin,
  day: number,
  incidents: IncidentRow[],
  priced: PricedDayRow[],
  supply: SupplyDayRow[],
  cur: Cursor,
  upstream: (id: string) => Upstream | undefined,
): RawInputs {
  const t = day * 86400;
  while (cur.days < priced.length && priced[cur.days].day < day) cur.days++;
  while (cur.supply < supply.length && supply[cur.supply].day <= day) cur.supply++;
  const windowStart = day - Math.ceil(4 * 365.25);
  while (cur.window < cur.days && priced[cur.window].day < windowStart) cur.window++;
  const pricedDays = cur.days - cur.window;
  const known: ScoredIncident[] = [];
  let activeBps: number | null = null;
  for (const e of incidents) {
    if (e.started_at > t) break;
    const open = e.ended_at === null || e.ended_at > t;
    let peakBps = e.peak;
    if (open) {
      let worst = 0;
      for (let i = cur.days - 1; i >= 0 && priced[i].day >= Math.floor(e.started_at / 86400); i--)
        worst = Math.max(worst, priced[i].worst_bps);
      const bps = Math.max(activeBps ?? 0, worst);
      activeBps = bps;
      peakBps = (Math.sign(e.peak) || -1) * bps;
    }
    known.push({
      startedAt: e.started_at,
      endedAt: open ? null : e.ended_at,
      peakDeviationBps: peakBps,
      constituentEventCount: e.n,
    });
  }
  const lastPriced = cur.days > 0 ? priced[cur.days - 1].day : null;
  const hasCurrentPrice = lastPriced !== null && lastPriced >= day - 2;
  const reason = pegScoreUnavailableReason({
    navToken: Boolean(c.nav_token),
    floatingPeg: Boolean(c.floating_peg),
    pricedDays,
    hasCurrentPrice,
  });
  const firstTs = priced.length ? priced[0].day * 86400 : null;
  const s = pegScore(known, firstTs, t, pricedDays * 86400);
  const sup = cur.supply > 0 && supply[cur.supply - 1].day >= day - 7 ? supply[cur.supply - 1].circulating_usd : null;
  const o: Observed = {
    pegScore: reason === null ? s.pegScore : null,
    pegScoreUnavailableReason: reason,
    pricedDays,
    hasCurrentPrice,
    activeDepeg: s.activeDepeg,
    activeDepegBps: activeBps,
    currentDeviationBps: null,
    depegEventCount: s.eventCount,
    lastEventAt: s.lastEventAt,
    circulatingUsd: sup,
    isDefunct: false,
    bluechipGrade: null,
  };
  return rawInputs(c, o, upstream);
}

/**
 * Coverage of a coin's grade: `defunct`, `unrated` (NR), `limited-peg-history` (graded under the
 * limited-evidence ceiling or without a peg score: NAV/floating) or `full`.
 */
export function coverageClass(r: RawInputs, grade: string): "defunct" | "unrated" | "limited-peg-history" | "full" {
  if (r.isDefunct) return "defunct";
  if (grade === "NR") return "unrated";
  return r.pegScore === null ? "limited-peg-history" : "full";
}

const maxOrNull = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));
