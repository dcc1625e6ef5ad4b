import { type Analytic, inputsAs } from "./contract.ts";
import { pegScore, type ScoredIncident } from "./peg-score.ts";
import { PEG_SCORE_VERSION } from "./peg-score.version.ts";

/**
 * Peg scores of every listed coin (DAG node). Writes `peg_scores` (one row per coin).
 * Tracking starts at the coin's first accepted price observation (supply says nothing about the
 * peg). The score is null, with `peg_score_unavailable_reason`, when the coin is not judged against
 * a fixed reference (`nav-token`, `floating-peg`), has no price observation (`no-price`), no current
 * price (`no-current-price`), or fewer than MIN_PRICED_DAYS distinct UTC days with a price in the
 * window (`insufficient-history`) — never a default 100. `unjudged_reason` (from `price_current`) says
 * why a coin's current price is not judged against a fixed peg reference (`nav-token`,
 * `floating-peg`, `no-reference`; null when judged or without a current price): its
 * `price_confidence` is the consensus label regardless.
 */
export const MIN_PRICED_DAYS = 30;

/** Why a coin has no peg score, or null when it has one. */
export function pegScoreUnavailableReason(c: {
  navToken: boolean;
  floatingPeg: boolean;
  pricedDays: number;
  hasCurrentPrice: boolean;
}): string | null {
  if (c.navToken) return "nav-token";
  if (c.floatingPeg) return "floating-peg";
  if (c.pricedDays === 0) return "no-price";
  if (!c.hasCurrentPrice) return "no-current-price";
  if (c.pricedDays < MIN_PRICED_DAYS) return "insufficient-history";
  return null;
}
/** Input rows of the peg summary (columns of its selects). */
interface PegSummaryInputs {
  coins: {
    id: string;
    symbol: string;
    name: string;
    peg_type: string;
    peg_currency: string;
    peg_mechanism: string | null;
    nav_token: boolean | null;
    floating_peg: boolean | null;
  };
  incidents: { stablecoin_id: string; started_at: number; ended_at: number | null; peak: number; n: number };
  current: {
    stablecoin_id: string;
    deviation_bps: number | null;
    price: number | null;
    price_confidence: string | null;
    peg_reference: number | null;
    reference_source: string | null;
    unjudged_reason: string | null;
  };
  starts: { stablecoin_id: string; first_ts: number; priced_days: number; recent_priced_days: number };
}

export const pegSummary: Analytic = {
  name: "peg_summary",
  inputs: {
    coins: `select c.id, c.symbol, c.name, c.peg_type, c.peg_currency, c.peg_mechanism, c.nav_token, c.floating_peg
          from registry_coins c where c.id in (select stablecoin_id from int_coins_supply_usd) order by c.id`,
    incidents: `select stablecoin_id, started_at::integer as started_at, ended_at::integer as ended_at, peak_deviation_bps::integer as peak,
          constituent_event_count::integer as n from depeg_incidents order by stablecoin_id, started_at`,
    current: `select stablecoin_id, deviation_bps::integer as deviation_bps, price, price_confidence, peg_reference, reference_source, unjudged_reason
          from price_current order by stablecoin_id`,
    starts: `select s.stablecoin_id, min(s.slot_ts)::integer as first_ts,
            count(distinct cast(make_timestamp((s.slot_ts - 1) * 1000000) as date)) filter (where s.slot_ts > (select as_of from build_context) - ${Math.ceil(4 * 365.25 * 86400)})::integer as priced_days,
            count(distinct cast(make_timestamp((s.slot_ts - 1) * 1000000) as date)) filter (where s.slot_ts > (select as_of from build_context) - ${90 * 86400})::integer as recent_priced_days
          from price_consensus_slots s where s.price is not null group by s.stablecoin_id order by s.stablecoin_id`,
  },
  outputs: {
    peg_scores: {
      stablecoin_id: "VARCHAR",
      symbol: "VARCHAR",
      name: "VARCHAR",
      peg_type: "VARCHAR",
      peg_currency: "VARCHAR",
      peg_mechanism: "VARCHAR",
      current_deviation_bps: "BIGINT",
      price: "DOUBLE",
      price_confidence: "VARCHAR",
      peg_reference: "DOUBLE",
      reference_source: "VARCHAR",
      peg_score: "BIGINT",
      peg_pct: "DOUBLE",
      severity_score: "DOUBLE",
      spread_penalty: "DOUBLE",
      active_penalty: "DOUBLE",
      event_count: "BIGINT",
      worst_deviation_bps: "BIGINT",
      active_depeg: "BOOLEAN",
      last_event_at: "BIGINT",
      tracking_span_days: "BIGINT",
      observation_started_at: "BIGINT",
      recent90d_json: "VARCHAR",
      methodology_version: "VARCHAR",
      peg_score_unavailable_reason: "VARCHAR",
      priced_days: "BIGINT",
      unjudged_reason: "VARCHAR",
    },
  },
  run(selected, { asOf }) {
    const inputs = inputsAs<PegSummaryInputs>(selected);
    const inc = new Map<string, ScoredIncident[]>();
    for (const r of inputs.incidents) {
      const a = inc.get(r.stablecoin_id) ?? [];
      a.push({ startedAt: r.started_at, endedAt: r.ended_at, peakDeviationBps: r.peak, constituentEventCount: r.n });
      inc.set(r.stablecoin_id, a);
    }
    const cur = new Map(inputs.current.map((r) => [r.stablecoin_id, r]));
    const starts = new Map(inputs.starts.map((r) => [r.stablecoin_id, r.first_ts]));
    const pricedDays = new Map(inputs.starts.map((r) => [r.stablecoin_id, r.priced_days]));
    const recentDays = new Map(inputs.starts.map((r) => [r.stablecoin_id, r.recent_priced_days]));
    const rows = inputs.coins.map((c) => {
      const k = cur.get(c.id);
      const reason = pegScoreUnavailableReason({
        navToken: Boolean(c.nav_token),
        floatingPeg: Boolean(c.floating_peg),
        pricedDays: pricedDays.get(c.id) ?? 0,
        hasCurrentPrice: k?.price !== null && k?.price !== undefined,
      });
      const judged = !c.nav_token && !c.floating_peg;
      const computed = pegScore(
        inc.get(c.id) ?? [],
        starts.get(c.id) ?? null,
        asOf,
        (pricedDays.get(c.id) ?? 0) * 86400,
        recentDays.get(c.id) ?? 0,
      );
      const s = reason === null ? computed : { ...computed, pegScore: null, pegPct: null, severityScore: null };
      return {
        stablecoin_id: c.id,
        symbol: c.symbol,
        name: c.name,
        peg_type: c.peg_type,
        peg_currency: c.peg_currency,
        peg_mechanism: c.peg_mechanism,
        current_deviation_bps: judged ? (k?.deviation_bps ?? null) : null,
        price: k?.price ?? null,
        price_confidence: k?.price_confidence ?? null,
        peg_reference: k?.peg_reference ?? null,
        reference_source: k?.reference_source ?? null,
        peg_score: s.pegScore,
        peg_pct: s.pegPct,
        severity_score: s.severityScore,
        spread_penalty: s.spreadPenalty,
        active_penalty: s.activePenalty,
        event_count: s.eventCount,
        worst_deviation_bps: s.worstDeviationBps,
        active_depeg: s.activeDepeg,
        last_event_at: s.lastEventAt,
        tracking_span_days: s.trackingSpanDays,
        observation_started_at: starts.get(c.id) ?? null,
        recent90d_json: JSON.stringify(s.recent90d),
        methodology_version: PEG_SCORE_VERSION,
        peg_score_unavailable_reason: reason,
        priced_days: pricedDays.get(c.id) ?? 0,
        unjudged_reason: k?.unjudged_reason ?? null,
      };
    });
    return { tables: { peg_scores: rows } };
  },
};
