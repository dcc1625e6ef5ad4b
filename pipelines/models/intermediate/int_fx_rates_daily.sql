-- USD per 1 unit of each currency, from EUR-based reference rates published at or before as-of.
-- `published_at` (Unix s): when the day's reference rates were published (stg_frankfurter__rates).
-- grain: one row per date, currency. pk: (date, currency)
with rates as (
    select * from stg_frankfurter__rates where base = 'EUR'
),

usd as (
    select date, published_at, rate as usd_per_eur from rates where quote = 'USD'
),

quoted as (
    select rates.date, rates.quote as currency, usd.usd_per_eur / rates.rate as usd_per_unit, greatest(rates.published_at, usd.published_at) as published_at
    from rates
    inner join usd on usd.date = rates.date
    where rates.quote <> 'USD'
),

eur as (
    select date, 'EUR' as currency, usd_per_eur as usd_per_unit, published_at from usd
),

final as (
    select * from quoted
    union all
    select * from eur
)

select * from final
