-- Published daily price history joined to registry ids where the CoinGecko id is known.
-- grain: one row per source, gecko_id, date. pk: (source, gecko_id, date)
with prices as (
    select * from stg_prices__daily
),

final as (
    select coins.id as stablecoin_id, prices.gecko_id, prices.source, prices.date, prices.price_usd
    from prices
    left join registry_coins coins on coins.gecko_id = prices.gecko_id
)

select * from final
