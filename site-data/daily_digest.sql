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

-- Supply: the daily points at the window's two ends (00:00 UTC of D and of D+1), one universe at both.
totals as (
    select t.aggregate_universe, t.date, t.circulating_usd
    from total_supply_daily t, ctx
    where t.peg_type = 'total' and t.date in (ctx.day, ctx.next_day)
),

total_pair as (
    select e.aggregate_universe, e.circulating_usd as total_usd, s.circulating_usd as previous_total_usd
    from totals e
    join totals s on s.aggregate_universe = e.aggregate_universe
    cross join ctx
    where e.date = ctx.next_day and s.date = ctx.day
    order by e.aggregate_universe = 'ballast-listed' desc
    limit 1
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
        'totalUsd': p.total_usd,
        'previousTotalUsd': p.previous_total_usd,
        'changeUsd': p.total_usd - p.previous_total_usd,
        'changePct': case when p.previous_total_usd > 0 then round(100 * (p.total_usd / p.previous_total_usd - 1), 2) end,
        'movers': coalesce(m.movers, [])
    } end as supply
    from ctx
    left join total_pair p on true
    cross join movers m
),

incident_rows as (
    select
        e.*,
        {'id': e.id::double, 'stablecoinId': e.stablecoin_id, 'symbol': e.symbol, 'direction': e.direction,
         'peakDeviationBps': e.peak_deviation_bps::integer, 'startedAt': e.started_at::integer, 'endedAt': e.ended_at::integer,
         'closeReason': e.close_reason, 'confirmationSources': e.confirmation_sources} as wire
    from depeg_events e
),

incidents as (
    select {
        'opened': coalesce(list(i.wire order by i.started_at, i.stablecoin_id) filter (where i.started_at > ctx.window_start and i.started_at <= ctx.window_end), []),
        'closed': coalesce(list(i.wire order by i.ended_at, i.stablecoin_id) filter (where i.ended_at > ctx.window_start and i.ended_at <= ctx.window_end), []),
        'openAtWindowEnd': count(*) filter (where i.started_at <= ctx.window_end and (i.ended_at is null or i.ended_at > ctx.window_end))::integer
    } as depeg_incidents,
    list(i.symbol || ' ' || i.peak_deviation_bps || ' bps' order by abs(i.peak_deviation_bps) desc, i.stablecoin_id)
        filter (where i.started_at > ctx.window_start and i.started_at <= ctx.window_end) as opened_text
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
        case when supply.supply is not null then 'total supply ' || case when supply.supply.changeUsd >= 0 then '+' else '-' end
            || format('{:.2f}', abs(supply.supply.changeUsd) / 1e9) || ' bn USD (' || case when supply.supply.changePct >= 0 then '+' else '' end
            || format('{:.2f}', supply.supply.changePct) || '%)' end
    ), ''), 'no supply, peg, freeze or grade data for this day') as headline,
    supply.supply as supply,
    incidents.depeg_incidents as "depegIncidents",
    freezes.freezes as freezes,
    grades.grade_changes as "gradeChanges",
    psi.stability_index as "stabilityIndex"
from ctx, supply, incidents, freezes, grades, psi
