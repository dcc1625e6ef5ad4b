-- Live reserve compositions: the components of each coin's newest capture at or before as-of (one
-- capture per coin and adapter run; empty without any live capture).
-- grain: one row per (stablecoin_id, name). pk: (stablecoin_id, name)
with source as (
    select * from raw_reserves__compositions
),

newest_capture as (
    select stablecoin_id, max(_observed_at) as _observed_at
    from source
    group by stablecoin_id
),

final as (
    select
        s.stablecoin_id,
        s.adapter,
        s.name,
        s.value_usd,
        s.pct,
        s.total_usd,
        s.reported_at,
        s.max_age_sec,
        s.observed_at
    from source s
    inner join newest_capture n on n.stablecoin_id = s.stablecoin_id and n._observed_at = s._observed_at
)

select * from final
