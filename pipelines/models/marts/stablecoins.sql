-- Current state of every listed coin (the /api/stablecoins list).
-- grain: one row per stablecoin_id. pk: (stablecoin_id)
with supply as (
    select * from int_coins_supply_usd
),

coins as (
    select * from registry_coins
),

chain_counts as (
    select stablecoin_id, count(*) as chain_count from int_chain_supply_usd group by stablecoin_id
),

context as (
    select * from build_context
),

prices as (
    select * from price_current
),

final as (
    select
        -- ids
        coins.id as stablecoin_id,
        coins.name,
        coins.symbol,
        supply.gecko_id,
        supply.peg_type,
        coins.peg_mechanism,
        coins.is_dead,
        coins.contracts_json,
        -- price: consensus of current quotes (pipelines/analytics/price-consensus.ts)
        prices.price,
        coalesce(prices.price_source, 'missing') as price_source,
        prices.price_confidence,
        coalesce(prices.consensus_sources_json, '[]') as consensus_sources_json,
        coalesce(prices.agree_sources_json, '[]') as agree_sources_json,
        prices.price_observed_at,
        prices.price_observed_at_mode,
        prices.price_synced_at,
        -- amounts, USD
        supply.circulating_usd,
        supply.prev_day_usd,
        supply.prev_week_usd,
        supply.prev_month_usd,
        supply.current_native,
        supply.conversion_basis,
        supply.usd_per_native,
        supply.chains_json,
        coalesce(chain_counts.chain_count, 0)::integer as chain_count
    from supply
    inner join coins on coins.id = supply.stablecoin_id
    left join chain_counts on chain_counts.stablecoin_id = supply.stablecoin_id
    left join prices on prices.stablecoin_id = supply.stablecoin_id
)

select * from final
