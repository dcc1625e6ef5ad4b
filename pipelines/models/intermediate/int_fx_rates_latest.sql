-- Latest reference rate on or before as-of per currency (working days carried forward).
-- grain: one row per currency. pk: (currency)
with daily as (
    select * from int_fx_rates_daily
),

context as (
    select * from build_context
),

final as (
    select daily.currency, arg_max(daily.usd_per_unit, daily.date) as usd_per_unit, max(daily.date) as rate_date
    from daily, context
    where daily.date <= context.as_of_day
    group by daily.currency
)

select * from final
