-- Coverage of the yield adapters: captures, newest capture time, pools, single-asset pools matched to a coin, coins covered.
with daily as (
    select * from int_yield_pools_daily
),

newest as (
    select * from yield_pools
),

matched as (
    select pool_id, any_value(stablecoin_id) as stablecoin_id
    from pool_coin_matches
    group by pool_id
    having count(*) = 1 and count(stablecoin_id) = 1
)

select
    (select count(distinct observed_at) from daily)::integer as captures,
    (select max(observed_at) from newest)::bigint as newest_capture_at,
    (select count(*) from newest)::integer as pools,
    (select count(*) from newest inner join matched using (pool_id))::integer as matched_pools,
    (select count(distinct stablecoin_id) from matched)::integer as coins
