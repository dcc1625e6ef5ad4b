-- Chronological tape of typed events (/api/events): depeg starts and recoveries (class depeg) and
-- freezes, unfreezes and destroys of the freeze ledger (class freeze, `chain` set).
-- Depeg severity: `critical` from 1000 bps, `warning` from 250 bps, else `info`. Freeze severity:
-- a destroy is `warning` (`critical` from $10M at event time), a freeze `info` (`warning` from $1M).
-- Safety grade changes (class score, from safety_score_history, seed rows excluded): `score.upgrade`,
-- `score.downgrade` (`critical` into D or F, else `warning`), `score.rated` / `score.unrated` (to or from
-- NR, `info`); an upgrade is `info`.
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

grade_rank as (
    select * from (values ('NR', -1), ('F', 0), ('D', 1), ('C-', 2), ('C', 3), ('C+', 4), ('B-', 5), ('B', 6), ('B+', 7), ('A-', 8), ('A', 9), ('A+', 10))
        as t(grade, rank)
),

grade_changes as (
    select
        'score-' || history.stablecoin_id || '-' || history.date::varchar as id,
        case
            when history.grade = 'NR' then 'score.unrated'
            when history.prev_grade = 'NR' then 'score.rated'
            when now_rank.rank > prev_rank.rank then 'score.upgrade'
            else 'score.downgrade'
        end as type,
        'score' as class,
        history.date as ts,
        history.stablecoin_id,
        history.symbol,
        coins.peg_currency,
        null::varchar as chain,
        case
            when history.grade in ('D', 'F') and now_rank.rank < prev_rank.rank and history.prev_grade <> 'NR' then 'critical'
            when now_rank.rank < prev_rank.rank and history.grade <> 'NR' and history.prev_grade <> 'NR' then 'warning'
            else 'info'
        end as severity,
        history.symbol || ' safety grade ' || history.prev_grade || ' → ' || history.grade
            || coalesce(' (score ' || history.prev_score::varchar || ' → ' || history.score::varchar || ')', '') as title,
        null::bigint as deviation_bps,
        null::bigint as depeg_event_id
    from safety_score_history as history
    inner join coins on coins.id = history.stablecoin_id
    inner join grade_rank as now_rank on now_rank.grade = history.grade
    inner join grade_rank as prev_rank on prev_rank.grade = history.prev_grade
    where history.prev_grade is not null and history.prev_grade <> history.grade
),

final as (
    select * from depegs
    union all
    select * from freezes
    union all
    select * from grade_changes
)

select * from final
