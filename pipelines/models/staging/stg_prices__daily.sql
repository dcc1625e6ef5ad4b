-- Daily USD prices from every price archive (DefiLlama, Alchemy, CoinGecko); newest capture wins per key.
-- grain: one row per source, gecko_id, date. pk: (source, gecko_id, date)
with archives as (
    select source, gecko_id, cast(date as date) as date, price_usd, _observed_at from raw_price_history
),

coingecko as (
    select 'coingecko' as source, gecko_id, date, price_usd, 0 as _observed_at
    from stg_coingecko__market_chart
    where price_usd is not null
),

unioned as (
    select * from archives
    union all
    select * from coingecko
),

final as (
    select source, gecko_id, date, price_usd
    from unioned
    qualify row_number() over (partition by source, gecko_id, date order by _observed_at desc) = 1
)

select * from final
