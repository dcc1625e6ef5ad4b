-- CoinGecko daily price / market cap / volume; per field, the newest capture with a value wins.
-- grain: one row per gecko_id, date. pk: (gecko_id, date)
with source as (
    select * from raw_coingecko__market_chart
),

final as (
    select
        gecko_id,
        cast(date as date) as date,
        arg_max(price_usd, _observed_at) filter (where price_usd is not null) as price_usd,
        arg_max(market_cap_usd, _observed_at) filter (where market_cap_usd is not null) as market_cap_usd,
        arg_max(volume_usd, _observed_at) filter (where volume_usd is not null) as volume_usd
    from source
    group by gecko_id, date
)

select * from final
