-- Chronological tape of typed events (/api/events): depeg starts and recoveries (class depeg) and
-- freezes, unfreezes and destroys of the freeze ledger (class freeze, `chain` set).
-- Depeg severity: `critical` from 1000 bps, `warning` from 250 bps, else `info`. Freeze severity:
-- a destroy is `warning` (`critical` from $10M at event time), a freeze `info` (`warning` from $1M).
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

depegs as (
    select
        id, type, class, ts, stablecoin_id, symbol, peg_currency, null::varchar as chain,
        case when abs(deviation_bps) >= 1000 then 'critical' when abs(deviation_bps) >= 250 then 'warning' else 'info' end as severity,
        title, deviation_bps, depeg_event_id
    from (select * from started union all select * from recovered)
),

freezes as (
    select
        'freeze-' || freeze_ledger.id as id,
        'freeze.' || freeze_ledger.event_type as type,
        'freeze' as class,
        freeze_ledger.ts,
        freeze_ledger.stablecoin_id,
        freeze_ledger.symbol,
        coins.peg_currency,
        freeze_ledger.chain_id as chain,
        case
            when freeze_ledger.event_type = 'destroy' and freeze_ledger.amount_usd_at_event >= 10000000 then 'critical'
            when freeze_ledger.event_type = 'destroy' or freeze_ledger.amount_usd_at_event >= 1000000 then 'warning'
            else 'info'
        end as severity,
        freeze_ledger.symbol || ' ' || freeze_ledger.event_type || ' of ' || freeze_ledger.address || ' on ' || freeze_ledger.chain_name
            || coalesce(' ($' || format('{:,.0f}', freeze_ledger.amount_usd_at_event) || ')', '') as title,
        null::bigint as deviation_bps,
        null::bigint as depeg_event_id
    from blacklist_events as freeze_ledger
    inner join coins on coins.id = freeze_ledger.stablecoin_id
),

final as (
    select * from depegs
    union all
    select * from freezes
)

select * from final
