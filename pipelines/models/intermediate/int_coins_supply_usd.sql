-- Listed coins joined to the registry with supply buckets converted to USD.
-- grain: one row per stablecoin_id. pk: (stablecoin_id)
with assets as (
    select * from stg_defillama__assets
),

coins as (
    select * from registry_coins
),

fx as (
    select * from int_fx_rates_latest
),

joined as (
    select
        coins.id as stablecoin_id,
        coins.peg_currency,
        coins.is_dead,
        assets.*,
        fx.usd_per_unit as fx_usd_per_unit,
        fx.rate_date as fx_rate_date
    from assets
    inner join coins on coins.llama_id = assets.llama_id
    left join fx on fx.currency = coins.peg_currency
),

converted as (
    select
        *,
        -- USD per native unit: upstream USD needs none; else the coin's own price, else FX, else par for USD pegs
        case
            when circulating_unit = 'usd' then 1.0
            when price is not null then price
            when fx_usd_per_unit is not null then fx_usd_per_unit
            when peg_currency = 'USD' then 1.0
        end as usd_per_native,
        case
            when circulating_unit = 'usd' then 'upstream-usd'
            when price is not null then 'price'
            when fx_usd_per_unit is not null then 'fx'
            when peg_currency = 'USD' then 'peg-par'
            else 'unavailable'
        end as conversion_basis
    from joined
),

final as (
    select
        stablecoin_id,
        llama_id,
        gecko_id,
        peg_type,
        peg_currency,
        price,
        price_source,
        observed_at,
        conversion_basis,
        usd_per_native,
        fx_usd_per_unit,
        fx_rate_date,
        chains_json,
        -- native peg units (null when the upstream sent USD)
        case when circulating_unit = 'native' then current_value end as current_native,
        -- amounts, USD
        current_value * usd_per_native as circulating_usd,
        prev_day_value * usd_per_native as prev_day_usd,
        prev_week_value * usd_per_native as prev_week_usd,
        prev_month_value * usd_per_native as prev_month_usd
    from converted
)

select * from final
