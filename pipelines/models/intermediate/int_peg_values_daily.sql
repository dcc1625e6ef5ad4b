-- USD value of one unit of each fixed peg per UTC day: the reference of the supply valuation rule
-- (see int_supply_valuation_daily). USD: 1 (`par`). Other fiat: the ECB reference rate of the day or
-- of up to 4 days before (`fx`: weekends, holidays; the freshness window `frankfurter.rates` declares,
-- source_current_windows); else the most recent ECB rate before the day
-- when it is at most 365 days old (`fx-stale`: e.g. the recorded ECB file ends 2025-05-09); else none
-- (currency not published by the ECB, or discontinued: RUB after 2022-03), and the valuation falls
-- back to the coin's accepted consensus price. Gold/silver, NAV tokens and floating pegs have no
-- fixed unit value here. Only rates dated on or before the day are used (never a later one).
-- grain: one row per peg_currency, date (every day from the first supply observation to as-of).
-- pk: (peg_currency, date)
with context as (
    select * from build_context
),

fx as (
    select * from int_fx_rates_daily
),

currencies as (
    select distinct peg_currency
    from registry_coins
    where peg_currency not in ('XAU', 'XAG', 'GOLD', 'SILVER', 'VAR', 'OTHER')
),

first_day as (
    select least(
        coalesce((select min(date) from stg_coingecko__market_chart), context.as_of_day),
        coalesce((select min(date) from stg_defillama__detail), context.as_of_day),
        coalesce((select min(date) from hist_supply_snapshots), context.as_of_day),
        coalesce((select min(cast(make_timestamp(observed_at * 1000000) as date)) from stg_defillama__assets), context.as_of_day) - 31,
        context.as_of_day - 31
    ) as day
    from context
),

spine as (
    select currencies.peg_currency, cast(days.d as date) as date
    from currencies, first_day, context, range(first_day.day, context.as_of_day + 1, interval 1 day) as days(d)
),

fx_window as (
    select window_sec / 86400 as days from source_current_windows where raw_table = 'raw_frankfurter__rates'
),

with_rate as (
    select spine.peg_currency, spine.date, fx.usd_per_unit, fx.date as fx_date
    from spine
    asof left join fx on fx.currency = spine.peg_currency and fx.date <= spine.date
),

final as (
    select
        peg_currency,
        date,
        case
            when peg_currency = 'USD' then 1.0
            when date - fx_date <= 365 then usd_per_unit
        end as usd_per_unit,
        case
            when peg_currency = 'USD' then 'par'
            when date - fx_date <= fx_window.days then 'fx'
            when date - fx_date <= 365 then 'fx-stale'
        end as basis,
        case when peg_currency <> 'USD' then fx_date end as fx_date
    from with_rate
    cross join fx_window
)

select * from final
