-- Coverage of the yield adapters: captures, newest capture time, pools, single-asset pools matched to a coin, coins covered.
with daily as (
    select * from int_yield_pools_daily
),

newest as (
    select * from yield_pools
),

matched as (
    select * from yield_single_asset_pools
)

select
    (select count(distinct observed_at) from daily)::integer as captures,
    (select max(observed_at) from newest)::bigint as newest_capture_at,
    (select count(*) from newest)::integer as pools,
    (select count(*) from newest inner join matched using (pool_id))::integer as matched_pools,
    (select count(distinct stablecoin_id) from matched)::integer as coins
