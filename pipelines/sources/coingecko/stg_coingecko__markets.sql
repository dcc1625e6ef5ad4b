-- CoinGecko /coins/markets, newest capture at or before as-of.
-- grain: one row per gecko_id. pk: (gecko_id)
with source as (
    select * from raw_coingecko__markets
),

final as (
    select
        gecko_id,
        symbol,
        price_usd,
        market_cap_usd,
        volume_24h_usd,
        circulating_supply,
        last_updated_at,
        observed_at
    from source
    qualify row_number() over (partition by gecko_id order by _observed_at desc) = 1
)

select * from final
