-- Daily APY of every single-asset pool matched to a registry coin, per capture day (the newest capture
-- of each day). Pools are matched through the newest capture's matches (pool ids are stable).
with daily as (
    select * from int_yield_pools_daily
),

matches as (
    select * from yield_single_asset_pools
),

final as (
    select
        matches.stablecoin_id, daily.observed_day, daily.pool_id, daily.project, daily.chain_id as chain, daily.apy, daily.apy_base, daily.apy_reward,
        daily.tvl_usd
    from daily
    inner join matches on matches.pool_id = daily.pool_id
    where daily.apy is not null
)

select * from final
order by stablecoin_id, observed_day, pool_id
