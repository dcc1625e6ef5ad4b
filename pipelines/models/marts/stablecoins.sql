-- Current state of every coin of the current universe (the /api/stablecoins list and summaries).
-- Supply comes from the valued daily series (int_coins_supply_current): the list's own day when a
-- DefiLlama list capture exists at or before as-of, else the latest accepted supply-history point at
-- most 3 days before as-of (`supply_mode` = 'history'); `supply_source` says which (spec supplySource).
-- Per-chain supply: stablecoin_chain_supply (withheld for a coin the supply-chain guard quarantines). Prices: consensus at as-of (price_current: each source's newest
-- accepted observation within its staleness window).
-- grain: one row per stablecoin_id. pk: (stablecoin_id)
with supply as (
    select * from int_coins_supply_current
),

coins as (
    select * from registry_coins
),

chain_rows as (
    select * from stablecoin_chain_supply
),

guard as (
    select * from supply_chain_guard
),

valuation as (
    select * from int_supply_valuation_daily
),

chain_lists as (
    select stablecoin_id, count(*) as chain_count, to_json(list(chain_name order by chain_name))::varchar as chains_json
    from chain_rows
    group by stablecoin_id
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
        coins.peg_type,
        coins.peg_currency,
        coins.peg_mechanism,
        coins.is_dead,
        coins.unreviewed,
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
        -- why price is null: 'no-observation' (nothing observed up to as-of) or 'stale-beyond-window'
        case when prices.price is null then coalesce(prices.price_unavailable_reason, 'no-observation') end as price_unavailable_reason,
        -- supply provenance
        supply.supply_mode,
        supply.supply_source,
        supply.supply_date,
        -- why current supply is null: 'stale-beyond-window' or 'no-observation' (int_coins_supply_current)
        supply.supply_unavailable_reason,
        supply.valuation_basis,
        supply.usd_per_native,
        -- age (days) of the ECB rate valuing the current supply (basis fx / fx-stale), else null
        datediff('day', valuation.fx_date, supply.supply_date) as fx_rate_age_days,
        supply.level_adjustment,
        -- amounts: native peg units and USD
        supply.current_native,
        supply.circulating_usd,
        supply.prev_day_usd,
        supply.prev_week_usd,
        supply.prev_month_usd,
        coalesce(supply.chains_json, chain_lists.chains_json, '[]') as chains_json,
        coalesce(chain_lists.chain_count, 0)::integer as chain_count,
        -- supply-chain guard (supply_chain_guard): null unless the coin is quarantined
        guard.status as supply_chain_guard_status,
        guard.quarantined_since as supply_chain_guard_since,
        guard.chains_json as supply_chain_guard_chains_json
    from supply
    inner join coins on coins.id = supply.stablecoin_id
    left join chain_lists on chain_lists.stablecoin_id = supply.stablecoin_id
    left join prices on prices.stablecoin_id = supply.stablecoin_id
    left join guard on guard.stablecoin_id = supply.stablecoin_id
    left join valuation on valuation.stablecoin_id = supply.stablecoin_id and valuation.date = supply.supply_date
)

select * from final
