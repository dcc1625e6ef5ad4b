import { READINESS_VERSION, RESOLVER_POLICY_VERSION } from "./depeg-resolver.version.ts";
import { type Analytic, inputsAs } from "./contract.ts";
import { thresholdBps } from "./depeg-detection.ts";
import { median } from "./price-consensus.ts";

/**
 * Depeg duration resolver (policy `ballast-resolver-v1`, readiness `readiness-72h-v1`). For every
 * incident it replays the incident's judged slots in time order as resolver runs and decides when
 * the prediction is sealed (spec 3.1). Pure functions.
 *
 * Readiness score (not a probability) = 0.3 input_coverage + 0.25 resolution_signal
 * + 0.2 duration_support + 0.25 observation_maturity, each 0-1 rounded to 3 dp:
 * - input_coverage = max(0, 1 − 0.28 × missing inputs) over: live price (a judged slot within 36 h),
 *   supply, trusted peg reference, market evidence (a CEX/DEX quote during the incident).
 * - resolution_signal from the stage-1 verdict: recovery_likely / recovery_unlikely
 *   0.9 + min(0.1, 0.025 × strong factors); at_risk 0.62 + min(0.08, 0.02 × factors);
 *   insufficient_signal 0.05. Verdict: fewer than 2 judged points → insufficient_signal;
 *   current |bps| ≤ half the peak and inside 2× threshold → recovery_likely; |bps| > 2500 and not
 *   better than 80% of the peak → recovery_unlikely; else at_risk. Factors (one each):
 *   recovery_likely: current |bps| below the threshold, a market (CEX/DEX) quote seen, |peak| ≤ 1000;
 *   recovery_unlikely: current |bps| > 5000, open more than 24 h; at_risk: current |bps| beyond 2×
 *   threshold, at least 4 judged points. Peak = largest |bps| among the judged points up to the run.
 * - duration_support: comparable closed incidents (same depth stratum, closed at or before the run):
 *   ≥ 5 → benchmarked 1, 2-4 → thin_support 0.65, else no_comparable_closures 0.35;
 *   score = 0.75 × cell + 0.25 × (≥ 5 ? 1 : 0.55).
 * - observation_maturity: 0 before 1 h, linear to 1 at 6 h.
 * States: a healthy run with score > 0.75 seals (`forecast_readiness`); else at startedAt + 72 h
 * (`readiness_backstop`). A run whose live price is stale (> 36 h) is unhealthy: the lock is
 * deferred (`lock_deferred`, reason `inputs-stale`) and the next healthy run seals. An incident that
 * recovers before a lock is `closed_pre_lock`; a seal with an `insufficient_signal` verdict is
 * `no_call`; still waiting at as-of is `pending_lock`. Builds publish atomically, so
 * `publication_retry_pending` never occurs; no erratum source exists yet, so neither does `invalidated`.
 * The sealed prediction: verdict, predicted duration = median duration of comparable closed
 * incidents, recovery likelihood = share of them that recovered.
 *
 * Version: `READINESS_VERSION` and `RESOLVER_POLICY_VERSION` (./depeg-resolver.version.ts).
 */
export const LOCK_THRESHOLD = 0.75;
export const BACKSTOP_DELAY_SEC = 72 * 3600;
const STALE_SEC = 36 * 3600;

export type DepthStratum = "minor" | "moderate" | "severe" | "catastrophic";
export function depthStratum(peakBps: number): DepthStratum {
  const a = Math.abs(peakBps);
  return a <= 250 ? "minor" : a <= 1000 ? "moderate" : a <= 2500 ? "severe" : "catastrophic";
}

export interface ResolverIncident {
  id: number;
  stablecoinId: string;
  symbol: string;
  pegType: string;
  startedAt: number;
  endedAt: number | null;
  peakDeviationBps: number;
  closeReason: string | null;
  supplyKnown: boolean;
  referenceTrusted: boolean;
}

/** A judged slot of the incident's coin. */
export interface ResolverPoint {
  ts: number;
  bps: number;
  market: boolean;
}

type Verdict = "recovery_likely" | "at_risk" | "recovery_unlikely" | "insufficient_signal";

const r3 = (x: number) => Math.round(x * 1000) / 1000;

function readinessAt(inc: ResolverIncident, points: ResolverPoint[], t: number, closed: ResolverIncident[]) {
  const seen = points.filter((p) => p.ts <= t);
  const last = seen.at(-1);
  const missing: string[] = [];
  if (!last || t - last.ts > STALE_SEC) missing.push("live-price");
  if (!inc.supplyKnown) missing.push("supply");
  if (!inc.referenceTrusted) missing.push("peg-reference");
  if (!seen.some((p) => p.market)) missing.push("market-evidence");
  const peak = seen.reduce((m, p) => (Math.abs(p.bps) > Math.abs(m) ? p.bps : m), 0);
  const threshold = thresholdBps(inc.pegType);
  let verdict: Verdict;
  let factors = 0;
  if (seen.length < 2 || !last) verdict = "insufficient_signal";
  else if (Math.abs(last.bps) <= Math.abs(peak) / 2 && Math.abs(last.bps) <= 2 * threshold) {
    verdict = "recovery_likely";
    factors =
      (Math.abs(last.bps) < threshold ? 1 : 0) +
      (seen.some((p) => p.market) ? 1 : 0) +
      (Math.abs(peak) <= 1000 ? 1 : 0);
  } else if (Math.abs(last.bps) > 2500 && Math.abs(last.bps) >= 0.8 * Math.abs(peak)) {
    verdict = "recovery_unlikely";
    factors = (Math.abs(last.bps) > 5000 ? 1 : 0) + (t - inc.startedAt > 24 * 3600 ? 1 : 0);
  } else {
    verdict = "at_risk";
    factors = (Math.abs(last.bps) > 2 * threshold ? 1 : 0) + (seen.length >= 4 ? 1 : 0);
  }
  const stratum = depthStratum(peak || inc.peakDeviationBps);
  const comparable = closed.filter(
    (c) => c.endedAt !== null && c.endedAt <= t && depthStratum(c.peakDeviationBps) === stratum,
  );
  const n = comparable.length;
  const cell = n >= 5 ? 1 : n >= 2 ? 0.65 : 0.35;
  const components = {
    input_coverage: r3(Math.max(0, 1 - 0.28 * missing.length)),
    resolution_signal: r3(
      verdict === "insufficient_signal"
        ? 0.05
        : verdict === "at_risk"
          ? 0.62 + Math.min(0.08, 0.02 * factors)
          : 0.9 + Math.min(0.1, 0.025 * factors),
    ),
    duration_support: r3(0.75 * cell + 0.25 * (n >= 5 ? 1 : 0.55)),
    observation_maturity: r3(t - inc.startedAt < 3600 ? 0 : Math.min(1, (t - inc.startedAt - 3600) / (5 * 3600))),
  };
  const score = r3(
    0.3 * components.input_coverage +
      0.25 * components.resolution_signal +
      0.2 * components.duration_support +
      0.25 * components.observation_maturity,
  );
  const durations = comparable.flatMap((c) => (c.endedAt === null ? [] : [c.endedAt - c.startedAt]));
  const recovered = comparable.filter((c) => c.closeReason === "recovered-primary").length;
  return {
    score,
    components,
    missing,
    verdict,
    stratum,
    healthy: !missing.includes("live-price"),
    comparableCount: n,
    predictedDurationSec: durations.length ? Math.round(median(durations)) : null,
    recoveryLikelihood: n ? r3(recovered / n) : null,
    lastBps: last?.bps ?? null,
  };
}

/** One resolver row (spec 2.7) per incident; `points` keyed by stablecoin id, ascending. */
export function resolveIncidents(incidents: ResolverIncident[], points: Map<string, ResolverPoint[]>, asOf: number) {
  const closed = incidents.filter((i) => i.endedAt !== null);
  return [...incidents]
    .sort((a, b) => b.startedAt - a.startedAt || b.id - a.id)
    .map((inc) => {
      const pts = (points.get(inc.stablecoinId) ?? []).filter(
        (p) => p.ts >= inc.startedAt && (inc.endedAt === null || p.ts <= inc.endedAt),
      );
      const backstopAt = inc.startedAt + BACKSTOP_DELAY_SEC;
      const runs = [...new Set([...pts.map((p) => p.ts), backstopAt])]
        .filter((t) => t <= asOf && (inc.endedAt === null || t < inc.endedAt))
        .sort((a, b) => a - b);
      let lock: {
        at: number;
        trigger: "forecast_readiness" | "readiness_backstop";
        r: ReturnType<typeof readinessAt>;
      } | null = null;
      let deferralCount = 0;
      let lastR: ReturnType<typeof readinessAt> | null = null;
      for (const t of runs) {
        const r = readinessAt(inc, pts, t, closed);
        lastR = r;
        const early = r.score > LOCK_THRESHOLD;
        const backstop = t >= backstopAt;
        if (!early && !backstop) continue;
        if (!r.healthy) {
          deferralCount++;
          continue;
        }
        lock = { at: t, trigger: early ? "forecast_readiness" : "readiness_backstop", r };
        break;
      }
      const nowR = lastR ?? readinessAt(inc, pts, Math.min(asOf, inc.endedAt ?? asOf), closed);
      const r = lock?.r ?? nowR;
      let state: string;
      if (lock) state = lock.r.verdict === "insufficient_signal" ? "no_call" : "frozen";
      else if (inc.endedAt !== null) state = "closed_pre_lock";
      else if (deferralCount > 0) state = "lock_deferred";
      else state = "pending_lock";
      const sealed = state === "frozen";
      return {
        incidentKey: `${inc.stablecoinId}:${inc.startedAt}`,
        eventId: inc.id,
        stablecoinId: inc.stablecoinId,
        symbol: inc.symbol,
        state,
        startedAt: inc.startedAt,
        depthStratum: depthStratum(inc.peakDeviationBps),
        lockTrigger: lock?.trigger ?? null,
        lockedAt: lock?.at ?? null,
        lockTimingSec: lock ? lock.at - inc.startedAt : null,
        verdict: lock && state !== "no_call" ? lock.r.verdict : null,
        // Both states come from a lock (above).
        predictedDurationSec: sealed && lock ? lock.r.predictedDurationSec : null,
        recoveryLikelihood: sealed && lock ? lock.r.recoveryLikelihood : null,
        missingInputs: state === "no_call" && lock ? lock.r.missing : [],
        readiness: {
          version: READINESS_VERSION,
          score: r.score,
          threshold: LOCK_THRESHOLD,
          strictEarlyLockReady: r.score > LOCK_THRESHOLD,
          reasons: r.missing
            .map((m) => `missing:${m}`)
            .concat(`verdict:${r.verdict}`, `comparable-closures:${r.comparableCount}`),
          components: r.components,
        },
        backstop: { version: READINESS_VERSION, delaySec: BACKSTOP_DELAY_SEC, backstopAt, reached: asOf >= backstopAt },
        deferralReason: deferralCount > 0 ? "inputs-stale" : null,
        deferralCount,
        policyVersion: RESOLVER_POLICY_VERSION,
        liveOverlay: {
          active: inc.endedAt === null,
          endedAt: inc.endedAt,
          closeReason: inc.closeReason,
          peakDeviationBps: inc.peakDeviationBps,
          currentDeviationBps: nowR.lastBps,
          observedDurationSec: (inc.endedAt ?? asOf) - inc.startedAt,
        },
      };
    });
}

/**
 * Review of sealed predictions against outcomes: per frozen row whose incident has ended, whether
 * it recovered, observed − predicted duration; aggregates: recovery-likelihood accuracy (share of
 * rows where likelihood ≥ 0.5 matched the outcome), Brier score, mean absolute duration error.
 */
export function reviewPredictions(rows: ResolverRow[]) {
  const judged = rows.filter((r) => r.state === "frozen" && !r.liveOverlay.active);
  const outcomes = judged.map((r) => {
    const recovered = r.liveOverlay.closeReason === "recovered-primary";
    const observed = r.liveOverlay.observedDurationSec as number;
    return {
      incidentKey: r.incidentKey,
      stablecoinId: r.stablecoinId,
      symbol: r.symbol,
      verdict: r.verdict,
      lockTrigger: r.lockTrigger,
      recoveryLikelihood: r.recoveryLikelihood,
      recovered,
      predictedDurationSec: r.predictedDurationSec,
      observedDurationSec: observed,
      durationErrorSec: r.predictedDurationSec === null ? null : observed - r.predictedDurationSec,
    };
  });
  const withLikelihood = outcomes.flatMap((o) =>
    o.recoveryLikelihood === null ? [] : [{ likelihood: o.recoveryLikelihood, recovered: o.recovered }],
  );
  const durationErrors = outcomes.flatMap((o) => (o.durationErrorSec === null ? [] : [o.durationErrorSec]));
  return {
    summary: {
      reviewedCount: outcomes.length,
      recoveryLikelihoodAccuracy: withLikelihood.length
        ? r3(withLikelihood.filter((o) => o.likelihood >= 0.5 === o.recovered).length / withLikelihood.length)
        : null,
      recoveryLikelihoodBrier: withLikelihood.length
        ? r3(
            withLikelihood.reduce((s, o) => s + (o.likelihood - (o.recovered ? 1 : 0)) ** 2, 0) / withLikelihood.length,
          )
        : null,
      meanAbsDurationErrorSec: durationErrors.length
        ? Math.round(durationErrors.reduce((s, e) => s + Math.abs(e), 0) / durationErrors.length)
        : null,
      medianDurationErrorSec: durationErrors.length
        ? [...durationErrors].sort((a, b) => a - b)[durationErrors.length >> 1]
        : null,
      resolvedBeforePrediction: rows.filter((r) => r.state === "closed_pre_lock").length,
      noCall: rows.filter((r) => r.state === "no_call").length,
      awaitingOutcome: rows.filter((r) => r.state === "frozen" && r.liveOverlay.active).length,
    },
    outcomes,
  };
}

/** One resolver row as resolveIncidents builds it (published as `row_json`). */
export type ResolverRow = ReturnType<typeof resolveIncidents>[number];

/** Input rows of the resolver node (columns of its selects). */
interface ResolverInputs {
  incidents: {
    id: string;
    stablecoin_id: string;
    symbol: string;
    peg_type: string;
    started_at: number;
    ended_at: number | null;
    peak_deviation_bps: number;
    close_reason: string | null;
    provenance_json: string;
  };
  points: { stablecoin_id: string; ts: number; bps: number; quotes_json: string };
}

/** The resolver as a DAG node: incidents + judged slots → resolver rows and the review. */
export const depegResolver: Analytic = {
  name: "depeg_resolver",
  inputs: {
    incidents: `select i.id::varchar as id, i.stablecoin_id, i.symbol, i.peg_type, i.started_at::integer as started_at, i.ended_at::integer as ended_at,
          i.peak_deviation_bps::integer as peak_deviation_bps, i.close_reason, i.provenance_json from depeg_incidents i order by i.stablecoin_id, i.started_at`,
    points: `select s.stablecoin_id, s.slot_ts::integer as ts, s.deviation_bps::integer as bps, s.quotes_json
          from price_consensus_slots s
          where s.deviation_bps is not null and s.stablecoin_id in (select stablecoin_id from depeg_incidents)
          order by s.stablecoin_id, s.slot_ts`,
  },
  outputs: {
    depeg_resolver_rows: { incident_key: "VARCHAR", started_at: "BIGINT", state: "VARCHAR", row_json: "VARCHAR" },
    depeg_resolver_review: { review_json: "VARCHAR" },
  },
  run(selected, { asOf }) {
    const inputs = inputsAs<ResolverInputs>(selected);
    const incidents: ResolverIncident[] = inputs.incidents.map((r) => {
      const prov = JSON.parse(r.provenance_json);
      return {
        id: Number(r.id),
        stablecoinId: r.stablecoin_id,
        symbol: r.symbol,
        pegType: r.peg_type,
        startedAt: r.started_at,
        endedAt: r.ended_at,
        peakDeviationBps: r.peak_deviation_bps,
        closeReason: r.close_reason,
        supplyKnown: prov.supplySource !== "unknown",
        referenceTrusted: prov.pegReferenceSource === "par" || prov.pegReferenceSource === "fx",
      };
    });
    const points = new Map<string, ResolverPoint[]>();
    for (const p of inputs.points) {
      const market = (JSON.parse(p.quotes_json) as [string, string, number][]).some(
        ([, category]) => category !== "off-chain",
      );
      const a = points.get(p.stablecoin_id) ?? [];
      a.push({ ts: p.ts, bps: p.bps, market });
      points.set(p.stablecoin_id, a);
    }
    const rows = resolveIncidents(incidents, points, asOf);
    return {
      tables: {
        depeg_resolver_rows: rows.map((r) => ({
          incident_key: r.incidentKey,
          started_at: r.startedAt,
          state: r.state,
          row_json: JSON.stringify(r),
        })),
        depeg_resolver_review: [{ review_json: JSON.stringify(reviewPredictions(rows)) }],
      },
    };
  },
};
