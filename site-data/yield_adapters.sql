-- /api/yield-adapter-manifest: coverage of the DefiLlama yields adapter (one row): captures, newest capture
-- time (Unix s), pools, single-asset pools matched to a coin, coins covered.
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
    (select max(observed_at) from newest)::integer as newestCaptureAt,
    (select count(*) from newest)::integer as pools,
    (select count(*) from newest inner join matched using (pool_id))::integer as singleAssetMatchedPools,
    (select count(distinct stablecoin_id) from matched)::integer as coins
