-- Per-chain supply of every listed coin, USD.
-- grain: one row per stablecoin_id, chain_id. pk: (stablecoin_id, chain_id)
with per_chain as (
    select * from int_chain_supply_usd
),

final as (
    select stablecoin_id, chain_id, chain_name, circulating_usd, prev_day_usd, prev_week_usd, prev_month_usd
    from per_chain
)

select * from final
