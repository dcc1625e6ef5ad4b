-- Per-chain supply of every current coin, USD (values failing a plausibility rule are left out; see
-- supply_value_rejections). Same valuation rule and day as the coin's current supply.
-- grain: one row per stablecoin_id, chain_id. pk: (stablecoin_id, chain_id)
with per_chain as (
    select * from int_chain_supply_usd
),

final as (
    select stablecoin_id, chain_id, chain_name, circulating_usd, prev_day_usd, prev_week_usd, prev_month_usd, source, date
    from per_chain
    where rejection_reason is null
)

select * from final
