-- Peg reference (USD per peg unit) per peg type and UTC day, judged on the day's own data.
-- USD: 1 (par). Fiat: ECB rate of the day or up to 4 days before (`fx`); else the median of >= 3
-- same-peg coins with >= $1M supply that day (`median`); else the last ECB rate, unusable for
-- detection (`fx-fallback`). Gold/silver: median of >= 3 peers per troy ounce (`median`), else none.
-- Floating pegs (`VAR`: CPI-indexed, redemption-rate targets) have no fixed reference (`floating`):
-- a median of unrelated floating coins is not a peg.
-- grain: one row per peg_type, day. pk: (peg_type, day)
with days as (
    select distinct peg_type, peg_currency, cast(make_timestamp(ts * 1000000) as date) as day
    from int_price_observations
),

supply as (
    select stablecoin_id, circulating_usd from int_coins_supply_usd
),

coin_day_price as (
    select obs.peg_type, cast(make_timestamp(obs.ts * 1000000) as date) as day, obs.stablecoin_id, median(obs.price_usd) as price_usd
    from int_price_observations obs
    inner join supply on supply.stablecoin_id = obs.stablecoin_id and supply.circulating_usd >= 1000000
    group by all
),

peer_median as (
    select peg_type, day, median(price_usd) as median_usd, count(*) as contributors
    from coin_day_price
    group by all
),

fx as (
    select currency, date, usd_per_unit from int_fx_rates_daily
),

fx_asof as (
    select days.peg_type, days.day, fx.usd_per_unit, fx.date as fx_date
    from days
    asof left join fx on fx.currency = days.peg_currency and fx.date <= days.day
),

final as (
    select
        days.peg_type,
        days.day,
        case
            when days.peg_currency = 'VAR' then null
            when days.peg_currency = 'USD' then 1.0
            when fx_asof.usd_per_unit is not null and days.day - fx_asof.fx_date <= 4 then fx_asof.usd_per_unit
            when peer_median.contributors >= 3 then peer_median.median_usd
            else fx_asof.usd_per_unit
        end as reference_usd,
        case
            when days.peg_currency = 'VAR' then 'floating'
            when days.peg_currency = 'USD' then 'par'
            when fx_asof.usd_per_unit is not null and days.day - fx_asof.fx_date <= 4 then 'fx'
            when peer_median.contributors >= 3 then 'median'
            when fx_asof.usd_per_unit is not null then 'fx-fallback'
            else 'missing'
        end as reference_source,
        coalesce(peer_median.contributors, 0) as contributors,
        fx_asof.fx_date
    from days
    left join fx_asof on fx_asof.peg_type = days.peg_type and fx_asof.day = days.day
    left join peer_median on peer_median.peg_type = days.peg_type and peer_median.day = days.day
)

select * from final
