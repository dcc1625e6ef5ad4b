-- Pools of the newest `/pools` capture of each UTC day (at or before as-of): the daily pool sets the
-- DEX liquidity history is computed from, so the history grows by one day per capture day.
-- grain: one row per observed_day and pool. pk: (observed_day, pool_id)
with pools as (
    select * from stg_defillama__yield_pools
),

final as (
    select *
    from pools
    qualify observed_at = max(observed_at) over (partition by observed_day)
)

select * from final
