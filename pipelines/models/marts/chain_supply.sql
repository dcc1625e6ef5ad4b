-- Chain aggregates over the current coins: supply now and about 1/7/30 days ago, share of the global total.
-- grain: one row per chain_id. pk: (chain_id)
with per_coin as (
    select * from stablecoin_chain_supply
),

shares as (
    select *, circulating_usd / nullif(sum(circulating_usd) over (partition by chain_id order by stablecoin_id rows between unbounded preceding and unbounded following), 0) as coin_share
    from per_coin
),

global as (
    select sum(circulating_usd order by stablecoin_id) as total_usd from stablecoins
),

aggregated as (
    select
        chain_id,
        any_value(chain_name order by chain_name) as chain_name,
        sum(circulating_usd order by stablecoin_id) as circulating_usd,
        sum(prev_day_usd order by stablecoin_id) as prev_day_usd,
        sum(prev_week_usd order by stablecoin_id) as prev_week_usd,
        sum(prev_month_usd order by stablecoin_id) as prev_month_usd,
        (count(*) filter (where circulating_usd > 0))::integer as coin_count,
        arg_max(stablecoin_id, circulating_usd) as top_stablecoin_id,
        -- concentration of coin supply on the chain (Herfindahl-Hirschman index, 0-1)
        sum(coin_share * coin_share order by stablecoin_id) as coin_hhi
    from shares
    group by chain_id
),

final as (
    select
        aggregated.*,
        aggregated.circulating_usd / nullif(global.total_usd, 0) as dominance_share
    from aggregated, global
)

select * from final
