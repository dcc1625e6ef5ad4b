-- Row of site-data/daily-digest.json: the edition of the last UTC day D closed at as-of (D = as-of's UTC
-- day minus one), over the window (D 00:00, D+1 00:00] Unix s. Wire names are given here, once.
with ctx as (
    select
        (as_of_day - interval 1 day)::date as day,
        as_of_day::date as next_day,
        epoch(as_of_day - interval 1 day)::integer as window_start,
        epoch(as_of_day)::integer as window_end,
        as_of::integer as as_of
    from build_context
),

-- Supply: the daily points at the window's two ends (00:00 UTC of D and of D+1), one universe at both, on
-- one stated basis: circulating supply, USD pegs at par (1 unit = 1 USD). `ballast-listed` is already on
-- it (listed_supply_daily: the supply valuation rule, `par` for USD pegs, the reference rate for other
-- pegs). DefiLlama's all-chain chart (`defillama-all`) is price-valued in USD; its units are the basis
-- (the `total` key: every peg's units at 1; per-peg keys: USD-peg units at par, other pegs at
-- DefiLlama's USD value). DefiLlama's price-valued total is the market value, reported apart.
chart_points as (
    select
        c.date,
        coalesce(
            max(c.circulating_native) filter (where c.peg_type = 'total'),
            sum(case when c.peg_type = 'peggedUSD' then c.circulating_native else c.circulating_usd end)
                filter (where c.peg_type <> 'total')
        ) as at_par_usd,
        coalesce(
            max(c.circulating_usd) filter (where c.peg_type = 'total'),
            sum(c.circulating_usd) filter (where c.peg_type <> 'total')
        ) as market_usd
    from stg_defillama__charts c, ctx
    where c.chart = 'all' and c.date in (ctx.day, ctx.next_day)
    group by c.date
),

totals as (
    select t.aggregate_universe, t.date, t.circulating_usd as at_par_usd
    from total_supply_daily t, ctx
    where t.aggregate_universe = 'ballast-listed' and t.peg_type = 'total' and t.date in (ctx.day, ctx.next_day)
    union all
    select 'defillama-all', date, at_par_usd from chart_points where at_par_usd is not null
),

total_pair as (
    select e.aggregate_universe, e.at_par_usd as total_usd, s.at_par_usd as previous_total_usd
    from totals e
    join totals s on s.aggregate_universe = e.aggregate_universe
    cross join ctx
    where e.date = ctx.next_day and s.date = ctx.day
    order by e.aggregate_universe = 'ballast-listed' desc
    limit 1
),

-- Market value: DefiLlama's price-valued total of every asset it tracks, at the same two points.
market_pair as (
    select e.market_usd as total_usd, s.market_usd as previous_total_usd
    from chart_points e
    join chart_points s on true
    cross join ctx
    where e.date = ctx.next_day and s.date = ctx.day and e.market_usd is not null and s.market_usd is not null
),

coin_moves as (
    select
        e.stablecoin_id,
        coalesce(c.symbol, e.stablecoin_id) as symbol,
        e.circulating_usd as circulating_usd,
        e.circulating_usd - s.circulating_usd as change_usd,
        case when s.circulating_usd > 0 then round(100 * (e.circulating_usd / s.circulating_usd - 1), 2) end as change_pct
    from supply_history_daily e
    join supply_history_daily s on s.stablecoin_id = e.stablecoin_id
    cross join ctx
    left join registry_coins c on c.id = e.stablecoin_id
    where e.date = ctx.next_day and s.date = ctx.day
      and e.circulating_usd is not null and s.circulating_usd is not null
      and e.circulating_usd <> s.circulating_usd
),

movers as (
    select list(
        {'stablecoinId': stablecoin_id, 'symbol': symbol, 'circulatingUsd': circulating_usd, 'changeUsd': change_usd, 'changePct': change_pct}
        order by abs(change_usd) desc, stablecoin_id
    )[1:5] as movers
    from coin_moves
),

supply as (
    select case when p.total_usd is null then null else {
        'date': strftime(ctx.next_day, '%Y-%m-%d'),
        'previousDate': strftime(ctx.day, '%Y-%m-%d'),
        'universe': p.aggregate_universe,
        'basis': 'circulating-usd-pegs-at-par',
        'totalUsd': p.total_usd,
        'previousTotalUsd': p.previous_total_usd,
        'changeUsd': p.total_usd - p.previous_total_usd,
        'changePct': case when p.previous_total_usd > 0 then round(100 * (p.total_usd / p.previous_total_usd - 1), 2) end,
        'movers': coalesce(m.movers, []),
        'marketValue': case when mv.total_usd is null then null else {
            'source': 'defillama-all',
            'basis': 'price-valued',
            'totalUsd': mv.total_usd,
            'previousTotalUsd': mv.previous_total_usd,
            'changeUsd': mv.total_usd - mv.previous_total_usd,
            'changePct': case when mv.previous_total_usd > 0 then round(100 * (mv.total_usd / mv.previous_total_usd - 1), 2) end
        } end
    } end as supply
    from ctx
    left join total_pair p on true
    left join market_pair mv on true
    cross join movers m
),

-- Incidents belong to the day their start or end became known (was confirmed), carrying their backdated
-- instants: the start is known at the slot that confirmed it (trace `opened`, ≥ startedAt); an end
-- observed at a slot is known then (= endedAt); an end inferred from lost tracking
-- (`orphan-tracking-removed`: endedAt = last observation + one cadence) is known once the coverage gap
-- after the last observation, max(3 × cadence, 6 h), has passed (ballast-depeg detection's rule).
incident_known as (
    select
        e.*,
        greatest(e.started_at, coalesce(try_cast(json_extract_string(e.trace_json, '$.opened.ts') as bigint), e.started_at)) as start_known_at,
        case
            when e.ended_at is null then null
            when e.close_reason = 'orphan-tracking-removed' then
                coalesce(try_cast(json_extract_string(e.trace_json, '$.closed.ts') as bigint), e.ended_at)
                + greatest(3 * (e.ended_at - coalesce(try_cast(json_extract_string(e.trace_json, '$.closed.ts') as bigint), e.ended_at)), 21600) + 1
            else e.ended_at
        end as end_known_at
    from depeg_events e
),

incident_rows as (
    select
        e.*,
        {'id': e.id::double, 'stablecoinId': e.stablecoin_id, 'symbol': e.symbol, 'direction': e.direction,
         'peakDeviationBps': e.peak_deviation_bps::integer, 'startedAt': e.started_at::integer,
         'endedAt': case when e.end_known_at <= ctx.window_end then e.ended_at::integer end,
         'closeReason': case when e.end_known_at <= ctx.window_end then e.close_reason end,
         'confirmationSources': e.confirmation_sources,
         'startConfirmedAt': e.start_known_at::integer,
         'endConfirmedAt': case when e.end_known_at <= ctx.window_end then e.end_known_at::integer end} as wire
    from incident_known e, ctx
),

incidents as (
    select {
        'opened': coalesce(list(i.wire order by i.started_at, i.stablecoin_id) filter (where i.start_known_at > ctx.window_start and i.start_known_at <= ctx.window_end), []),
        'closed': coalesce(list(i.wire order by i.ended_at, i.stablecoin_id) filter (where i.end_known_at > ctx.window_start and i.end_known_at <= ctx.window_end), []),
        'openAtWindowEnd': count(*) filter (where i.start_known_at <= ctx.window_end and (i.end_known_at is null or i.end_known_at > ctx.window_end))::integer
    } as depeg_incidents,
    list(i.symbol || ' ' || i.peak_deviation_bps || ' bps'
            || case when i.started_at <= ctx.window_start then ' since ' || strftime(to_timestamp(i.started_at) at time zone 'UTC', '%Y-%m-%d %H:%MZ') else '' end
        order by abs(i.peak_deviation_bps) desc, i.stablecoin_id)
        filter (where i.start_known_at > ctx.window_start and i.start_known_at <= ctx.window_end) as opened_text
    from ctx
    left join incident_rows i on true
    group by all
),

freeze_rows as (
    select b.*
    from blacklist_events b, ctx
    where b.ts > ctx.window_start and b.ts <= ctx.window_end
),

freezes as (
    select {
        'blacklisted': count(*) filter (where event_type = 'blacklist')::integer,
        'unblacklisted': count(*) filter (where event_type = 'unblacklist')::integer,
        'destroyed': count(*) filter (where event_type = 'destroy')::integer,
        'frozenUsd': coalesce(sum(amount_usd_at_event) filter (where event_type = 'blacklist'), 0)::double,
        'destroyedUsd': coalesce(sum(amount_usd_at_event) filter (where event_type = 'destroy'), 0)::double,
        'amountsMissing': count(*) filter (where amount_usd_at_event is null)::integer,
        'largest': coalesce(list(
            {'id': id, 'stablecoinId': stablecoin_id, 'symbol': symbol, 'chainId': chain_id, 'eventType': event_type, 'address': address,
             'amountUsd': amount_usd_at_event, 'ts': ts::integer, 'txHash': tx_hash}
            order by amount_usd_at_event desc nulls last, ts, id
        ) filter (where event_type in ('blacklist', 'destroy')), [])[1:5]
    } as freezes
    from freeze_rows
),

grade_rows as (
    select h.*
    from safety_score_history h, ctx
    where h.date > ctx.window_start and h.date <= ctx.window_end
      and h.prev_grade is not null and h.prev_grade <> h.grade
),

grades as (
    select coalesce(list(
        {'stablecoinId': stablecoin_id, 'symbol': symbol, 'from': prev_grade, 'to': grade, 'score': score::integer, 'previousScore': prev_score::integer,
         'date': date::integer, 'methodologyVersion': methodology_version}
        order by stablecoin_id
    ), []) as grade_changes
    from grade_rows
),

-- Stability index: the daily reading dated D against the one dated D-1.
psi as (
    select case when e.band is null then null else {
        'date': strftime(ctx.day, '%Y-%m-%d'),
        'score': e.score,
        'band': e.band,
        'previousScore': s.score,
        'previousBand': s.band,
        'bandChanged': s.band is not null and s.band <> e.band
    } end as stability_index,
    case when s.band is not null and s.band <> e.band then 'stability index ' || s.band || ' → ' || e.band end as psi_text
    from ctx
    left join stability_index_daily e on e.date = ctx.day
    left join stability_index_daily s on s.date = ctx.day - interval 1 day
)

select
    strftime(ctx.day, '%Y-%m-%d') as "date",
    'daily' as edition,
    ctx.as_of as "asOf",
    ctx.window_start as "windowStart",
    ctx.window_end as "windowEnd",
    strftime(ctx.day, '%Y-%m-%d') || ': ' || coalesce(nullif(concat_ws('; ',
        case when len(incidents.opened_text) > 0 then len(incidents.opened_text) || ' depeg incident' || case when len(incidents.opened_text) > 1 then 's' else '' end
            || ' opened (' || array_to_string(incidents.opened_text, ', ') || ')' end,
        case when len(incidents.depeg_incidents.closed) > 0 then len(incidents.depeg_incidents.closed) || ' closed' end,
        psi.psi_text,
        case when len(grades.grade_changes) > 0 then len(grades.grade_changes) || ' grade change' || case when len(grades.grade_changes) > 1 then 's' else '' end end,
        case when freezes.freezes.blacklisted + freezes.freezes.destroyed > 0
            then freezes.freezes.blacklisted || ' freeze' || case when freezes.freezes.blacklisted = 1 then '' else 's' end
                || ', ' || freezes.freezes.destroyed || ' destroy' || case when freezes.freezes.destroyed = 1 then '' else 's' end end,
        case when supply.supply is not null then 'circulating supply ' || case when supply.supply.changeUsd >= 0 then '+' else '-' end
            || format('{:.2f}', abs(supply.supply.changeUsd) / 1e9) || ' bn USD at par (' || case when supply.supply.changePct >= 0 then '+' else '' end
            || format('{:.2f}', supply.supply.changePct) || '%)' end,
        case when supply.supply.marketValue is not null then 'market value ' || case when supply.supply.marketValue.changeUsd >= 0 then '+' else '-' end
            || format('{:.2f}', abs(supply.supply.marketValue.changeUsd) / 1e9) || ' bn USD (' || case when supply.supply.marketValue.changePct >= 0 then '+' else '' end
            || format('{:.2f}', supply.supply.marketValue.changePct) || '%)' end
    ), ''), 'no supply, peg, freeze or grade data for this day') as headline,
    supply.supply as supply,
    incidents.depeg_incidents as "depegIncidents",
    freezes.freezes as freezes,
    grades.grade_changes as "gradeChanges",
    psi.stability_index as "stabilityIndex"
from ctx, supply, incidents, freezes, grades, psi
