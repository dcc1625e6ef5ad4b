-- Chronological tape of typed events (/api/events): depeg starts and recoveries for now.
-- Severity: `critical` from 1000 bps (or an extreme move), `warning` from 250 bps, else `info`.
-- grain: one row per id. pk: (id)
with incidents as (
    select * from depeg_incidents
),

coins as (
    select * from registry_coins
),

started as (
    select
        'depeg-' || incidents.id::varchar || '-started' as id,
        'depeg.started' as type,
        'depeg' as class,
        incidents.started_at as ts,
        incidents.stablecoin_id,
        incidents.symbol,
        coins.peg_currency,
        incidents.peak_deviation_bps as deviation_bps,
        incidents.id as depeg_event_id,
        incidents.symbol || ' ' || incidents.direction || ' peg: peak ' || incidents.peak_deviation_bps::varchar || ' bps' as title
    from incidents
    inner join coins on coins.id = incidents.stablecoin_id
),

recovered as (
    select
        'depeg-' || incidents.id::varchar || '-ended' as id,
        case when incidents.close_reason = 'recovered-primary' then 'depeg.recovered' else 'depeg.closed' end as type,
        'depeg' as class,
        incidents.ended_at as ts,
        incidents.stablecoin_id,
        incidents.symbol,
        coins.peg_currency,
        incidents.peak_deviation_bps as deviation_bps,
        incidents.id as depeg_event_id,
        incidents.symbol || ' back at peg after ' || round((incidents.ended_at - incidents.started_at) / 3600.0, 1)::varchar || ' h (' || incidents.close_reason || ')' as title
    from incidents
    inner join coins on coins.id = incidents.stablecoin_id
    where incidents.ended_at is not null
),

unioned as (
    select * from started
    union all
    select * from recovered
),

final as (
    select
        id,
        type,
        class,
        ts,
        stablecoin_id,
        symbol,
        peg_currency,
        null::varchar as chain,
        case when abs(deviation_bps) >= 1000 then 'critical' when abs(deviation_bps) >= 250 then 'warning' else 'info' end as severity,
        title,
        deviation_bps,
        depeg_event_id
    from unioned
)

select * from final
