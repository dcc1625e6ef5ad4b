-- Per-chain supply of every current coin, USD (values failing a plausibility rule are left out; see
-- supply_value_rejections; chains of a coin quarantined by the supply-chain guard are withheld, see
-- supply_chain_guard). Same valuation rule and day as the coin's current supply.
-- grain: one row per stablecoin_id, chain_id. pk: (stablecoin_id, chain_id)
with per_chain as (
    select * from int_chain_supply_usd
),

quarantined as (
    select stablecoin_id from supply_chain_guard
),

final as (
    select stablecoin_id, chain_id, chain_name, circulating_usd, prev_day_usd, prev_week_usd, prev_month_usd, source, date
    from per_chain
    where rejection_reason is null
        and stablecoin_id not in (select stablecoin_id from quarantined)
)

select * from final
