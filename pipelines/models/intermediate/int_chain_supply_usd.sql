-- Per-chain supply of listed coins, USD, with registry chain ids.
-- grain: one row per stablecoin_id, chain_id. pk: (stablecoin_id, chain_id)
with buckets as (
    select * from stg_defillama__chain_buckets
),

coins as (
    select * from int_coins_supply_usd
),

chains as (
    select * from registry_chains
),

final as (
    select
        coins.stablecoin_id,
        chains.id as chain_id,
        buckets.chain_label as chain_name,
        buckets.current_value * coins.usd_per_native as circulating_usd,
        buckets.prev_day_value * coins.usd_per_native as prev_day_usd,
        buckets.prev_week_value * coins.usd_per_native as prev_week_usd,
        buckets.prev_month_value * coins.usd_per_native as prev_month_usd
    from buckets
    inner join coins on coins.llama_id = buckets.llama_id
    inner join chains on chains.name = buckets.chain_label
)

select * from final
