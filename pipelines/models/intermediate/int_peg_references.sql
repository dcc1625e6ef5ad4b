-- Peg reference (USD per peg unit) per peg type and UTC day, judged on the day's own data.
-- USD: 1 (par). Fiat: the peg's unit value of int_peg_values_daily when it is the ECB rate of the day
-- or up to 4 days before (`fx`); else the median of >= 3 same-peg coins with >= $1M supply that day
-- (`median`); else the stale ECB rate (<= 365 days), unusable for detection (`fx-fallback`).
-- Gold/silver: median of >= 3 peers per troy ounce (`median`), else none.
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

peg_values as (
    select * from int_peg_values_daily
),

final as (
    select
        days.peg_type,
        days.day,
        case
            when days.peg_currency = 'VAR' then null
            when days.peg_currency = 'USD' then 1.0
            when peg_values.basis in ('par', 'fx') then peg_values.usd_per_unit
            when peer_median.contributors >= 3 then peer_median.median_usd
            else peg_values.usd_per_unit
        end as reference_usd,
        case
            when days.peg_currency = 'VAR' then 'floating'
            when days.peg_currency = 'USD' then 'par'
            when peg_values.basis in ('par', 'fx') then peg_values.basis
            when peer_median.contributors >= 3 then 'median'
            when peg_values.usd_per_unit is not null then 'fx-fallback'
            else 'missing'
        end as reference_source,
        coalesce(peer_median.contributors, 0) as contributors,
        peg_values.fx_date
    from days
    left join peg_values on peg_values.peg_currency = days.peg_currency and peg_values.date = days.day
    left join peer_median on peer_median.peg_type = days.peg_type and peer_median.day = days.day
)

select * from final
