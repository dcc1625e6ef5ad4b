import type { Analytic } from "./contract.ts";
import { PEG_SCORE_VERSION, pegScore, type ScoredIncident } from "./peg-score.ts";

/**
 * Peg scores of every listed coin with a tracking history (DAG node). Tracking starts at the coin's
 * first price or supply observation. Writes `peg_scores` (one row per coin).
 */
export const pegSummary: Analytic = {
  name: "peg_summary",
  inputs: {
    coins: `select c.id, c.symbol, c.name, c.peg_type, c.peg_currency, c.peg_mechanism
          from registry_coins c where c.id in (select stablecoin_id from int_coins_supply_usd) order by c.id`,
    incidents: `select stablecoin_id, started_at::integer as started_at, ended_at::integer as ended_at, peak_deviation_bps::integer as peak,
          constituent_event_count::integer as n from depeg_incidents order by stablecoin_id, started_at`,
    current: `select stablecoin_id, deviation_bps::integer as deviation_bps, price, price_confidence, peg_reference, reference_source
          from price_current order by stablecoin_id`,
    starts: `select stablecoin_id, min(ts)::integer as first_ts from (
            select stablecoin_id, ts from int_price_observations
            union all select stablecoin_id, epoch(date)::bigint as ts from int_supply_history_points
          ) group by stablecoin_id order by stablecoin_id`,
  },
  outputs: {
    peg_scores: {
      stablecoin_id: "VARCHAR", symbol: "VARCHAR", name: "VARCHAR", peg_type: "VARCHAR", peg_currency: "VARCHAR", peg_mechanism: "VARCHAR",
      current_deviation_bps: "BIGINT", price: "DOUBLE", price_confidence: "VARCHAR", peg_reference: "DOUBLE", reference_source: "VARCHAR",
      peg_score: "BIGINT", peg_pct: "DOUBLE", severity_score: "DOUBLE", spread_penalty: "DOUBLE", active_penalty: "DOUBLE", event_count: "BIGINT",
      worst_deviation_bps: "BIGINT", active_depeg: "BOOLEAN", last_event_at: "BIGINT", tracking_span_days: "BIGINT", observation_started_at: "BIGINT",
      recent90d_json: "VARCHAR", methodology_version: "VARCHAR",
    },
  },
  run(inputs, { asOf }) {
    const inc = new Map<string, ScoredIncident[]>();
    for (const r of inputs.incidents) {
      const a = inc.get(r.stablecoin_id) ?? [];
      a.push({ startedAt: r.started_at, endedAt: r.ended_at, peakDeviationBps: r.peak, constituentEventCount: r.n });
      inc.set(r.stablecoin_id, a);
    }
    const cur = new Map(inputs.current.map((r) => [r.stablecoin_id as string, r]));
    const starts = new Map(inputs.starts.map((r) => [r.stablecoin_id as string, r.first_ts as number]));
    const rows = inputs.coins.map((c) => {
      const s = pegScore(inc.get(c.id) ?? [], starts.get(c.id) ?? null, asOf);
      const k = cur.get(c.id);
      return {
        stablecoin_id: c.id, symbol: c.symbol, name: c.name, peg_type: c.peg_type, peg_currency: c.peg_currency, peg_mechanism: c.peg_mechanism,
        current_deviation_bps: k?.deviation_bps ?? null, price: k?.price ?? null, price_confidence: k?.price_confidence ?? null,
        peg_reference: k?.peg_reference ?? null, reference_source: k?.reference_source ?? null,
        peg_score: s.pegScore, peg_pct: s.pegPct, severity_score: s.severityScore, spread_penalty: s.spreadPenalty, active_penalty: s.activePenalty,
        event_count: s.eventCount, worst_deviation_bps: s.worstDeviationBps, active_depeg: s.activeDepeg, last_event_at: s.lastEventAt,
        tracking_span_days: s.trackingSpanDays, observation_started_at: starts.get(c.id) ?? null, recent90d_json: JSON.stringify(s.recent90d),
        methodology_version: PEG_SCORE_VERSION,
      };
    });
    return { tables: { peg_scores: rows } };
  },
};
