-- Quality metadata of site-data/dex-liquidity.json: pool and token counts of the newest capture by match outcome.
with matches as (
    select * from pool_coin_matches
),

pools as (
    select * from yield_pools
),

final as (
    select
        (select count(*) from pools) as pools_total,
        (select count(*) from pools where is_stablecoin) as stablecoin_pools,
        (select count(distinct pool_id) from matches where stablecoin_id is not null) as pools_matched,
        (select count(*) from matches) as tokens_total,
        (select count(*) from matches where stablecoin_id is not null) as tokens_matched,
        (select count(*) from pools where underlying_tokens_json is not null) as pools_with_addresses,
        (select count(*) from pools where volume_usd_1d is not null) as pools_with_volume,
        (select coalesce(string_agg(unmatched_reason || '=' || n, ',' order by unmatched_reason), '')
            from (select unmatched_reason, count(*) as n from matches where unmatched_reason is not null group by unmatched_reason)) as unmatched_by_reason,
        (select max(observed_at) from pools) as observed_at
)

select * from final
