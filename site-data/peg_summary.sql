-- Row of site-data/peg-summary.json, wire names: every listed coin's peg score (mart peg_scores), best
-- score first, ties: more priced days first (longer evidence), then id; the depeg incidents started on the
-- as-of's UTC day and the day before; the peg references of the as-of day that fell back to a stale FX
-- rate (pegType → USD, as MAP entries; not used for detection). History coverage of the 4-year window
-- (1,461 days: 4 × 365.25 rounded up) from the priced UTC days: `full` ≥ 95%, `partial` ≥ 30 days, `early`
-- 7-29, `insufficient` < 7; its share in % with two decimals. `recent90d` is a JSON document the artifact
-- parses; the aggregate summary is derived from the coins by the artifact.
with scores as (
    select
        *,
        coalesce(priced_days, 0) as days_priced
    from peg_scores
),

ctx as (
    select epoch(as_of_day) as day_start, as_of_day from build_context
)

select
    (
        select coalesce(list({
            id: stablecoin_id,
            symbol: symbol,
            name: name,
            pegType: peg_type,
            pegCurrency: peg_currency,
            pegMechanism: peg_mechanism,
            currentDeviationBps: current_deviation_bps::double,
            pegScore: peg_score::double,
            pegScoreUnavailableReason: peg_score_unavailable_reason,
            pegPct: peg_pct,
            severityScore: severity_score,
            spreadPenalty: coalesce(spread_penalty, 0)::double,
            activePenalty: coalesce(active_penalty, 0)::double,
            eventCount: coalesce(event_count, 0)::double,
            worstDeviationBps: worst_deviation_bps::double,
            activeDepeg: coalesce(active_depeg, false),
            lastEventAt: last_event_at::double,
            trackingSpanDays: coalesce(tracking_span_days, 0)::double,
            observationStartedAt: observation_started_at::double,
            historyCoverage: case
                when days_priced >= 0.95 * 1461 then 'full'
                when days_priced >= 30 then 'partial'
                when days_priced >= 7 then 'early'
                else 'insufficient'
            end,
            pricedDays: days_priced::double,
            historyCoveragePct: round(days_priced::double / 1461 * 10000) / 100,
            referenceEvidence: {
                price: price,
                priceConfidence: price_confidence,
                pegReference: peg_reference,
                referenceSource: reference_source
            },
            recent90d: recent90d_json,
            methodologyVersion: methodology_version
        } order by peg_score desc nulls last, priced_days desc, stablecoin_id), [])
        from scores
    ) as coins,
    (
        select count(*) filter (where e.started_at >= ctx.day_start)::double
        from depeg_events e, ctx
    ) as depegEventsToday,
    (
        select count(*) filter (where e.started_at >= ctx.day_start - 86400 and e.started_at < ctx.day_start)::double
        from depeg_events e, ctx
    ) as depegEventsYesterday,
    (
        select coalesce(list({ 'key': r.peg_type, 'value': r.reference_usd } order by r.peg_type), [])
        from int_peg_references r, ctx
        where r.day = ctx.as_of_day and r.reference_source = 'fx-fallback'
    ) as fallbackPegRates
