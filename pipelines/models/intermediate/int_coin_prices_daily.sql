-- One USD price per coin and UTC day for valuing on-chain events: the median over the price
-- archives that quote the coin that day (joined on the CoinGecko id, as price_history_daily).
-- grain: one row per stablecoin_id, date. pk: (stablecoin_id, date)
with prices as (
    select * from stg_prices__daily
),

coins as (
    select * from registry_coins
),

final as (
    select coins.id as stablecoin_id, prices.date, median(prices.price_usd) as price_usd, count(*) as sources
    from prices
    inner join coins on coins.gecko_id = prices.gecko_id
    where prices.price_usd > 0
    group by coins.id, prices.date
)

select * from final
