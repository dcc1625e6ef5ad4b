-- /api/yield-history/{id}: daily APY of every single-asset pool matched to a registry coin (one file per
-- stablecoin_id), per capture day (the newest capture of each day), oldest first. Pools are matched through
-- the newest capture's matches (pool ids are stable). sourceKey carries the pool id (the artifact prefixes its source).
with daily as (
    select * from int_yield_pools_daily
),

matches as (
    select * from yield_single_asset_pools
),

final as (
    select
        matches.stablecoin_id,
        epoch(daily.observed_day)::integer as date,
        daily.pool_id as sourceKey,
        daily.project,
        daily.chain_id as chain,
        daily.apy::double as apy,
        daily.apy_base::double as apyBase,
        daily.apy_reward::double as apyReward,
        coalesce(daily.tvl_usd, 0)::double as tvlUsd
    from daily
    inner join matches on matches.pool_id = daily.pool_id
    where daily.apy is not null
    order by matches.stablecoin_id, daily.observed_day, daily.pool_id
)

select * from final
