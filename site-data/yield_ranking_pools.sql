-- Yield ranking candidates: pools of the newest /pools capture with exactly one token, matched to one
-- registry coin (yield_single_asset_pools), with an APY; plus each pool's daily APY samples across captures
-- (oldest first) and the coin's peg currency and curated backing.
with pools as (
    select * from yield_pools
),

single_asset as (
    select * from yield_single_asset_pools
),

samples as (
    select pool_id, list(apy order by observed_day) as apy_samples
    from int_yield_pools_daily
    where apy is not null
    group by pool_id
),

coins as (
    select id, symbol, peg_currency, json_extract_string(risk_json, '$.backing') as backing from registry_coins
),

final as (
    select
        pools.pool_id, single_asset.stablecoin_id, coins.symbol, coins.peg_currency, coins.backing, pools.project, pools.chain, pools.pool_meta,
        pools.tvl_usd, pools.apy, pools.apy_base, pools.apy_reward, pools.apy_pct_1d, pools.apy_pct_7d, coalesce(pools.outlier, false) as outlier,
        pools.observed_at, to_json(coalesce(samples.apy_samples, []))::varchar as apy_samples_json
    from pools
    inner join single_asset on single_asset.pool_id = pools.pool_id
    inner join coins on coins.id = single_asset.stablecoin_id
    left join samples on samples.pool_id = pools.pool_id
    where pools.apy is not null
)

select * from final
order by pool_id
