-- This build's DefiLlama /stablecoins buckets (current and 1/7/30-day) as native peg units, for the
-- coin total (chain_label null) and per chain label, dated from the capture's UTC observation day.
-- Captures before 2025-12-01 carry units; later ones carry USD = units x the upstream's price, so
-- units = value / that price, or / the peg's unit value of the day when the upstream sent no price.
-- grain: one row per stablecoin_id, chain_label, date.
with coins as (
    select * from registry_coins
),

assets as (
    select * from stg_defillama__assets
),

peg_values as (
    select * from int_peg_values_daily
),

buckets as (
    select llama_id, null::varchar as chain_label, current_value, prev_day_value, prev_week_value, prev_month_value
    from assets
    union all
    select llama_id, chain_label, current_value, prev_day_value, prev_week_value, prev_month_value
    from stg_defillama__chain_buckets
),

list_values as (
    select
        coins.id as stablecoin_id,
        coins.peg_currency,
        buckets.chain_label,
        cast(make_timestamp(assets.observed_at * 1000000) as date) - offs.days as date,
        case offs.days when 0 then buckets.current_value when 1 then buckets.prev_day_value
            when 7 then buckets.prev_week_value else buckets.prev_month_value end as value,
        assets.circulating_unit,
        assets.price
    from buckets
    inner join assets on assets.llama_id = buckets.llama_id
    inner join coins on coins.llama_id = buckets.llama_id
    cross join (values (0), (1), (7), (30)) as offs(days)
),

final as (
    select
        list_values.stablecoin_id,
        list_values.chain_label,
        list_values.date,
        case
            when list_values.circulating_unit = 'native' then list_values.value
            when list_values.price > 0 then list_values.value / list_values.price
            when peg_values.usd_per_unit > 0 then list_values.value / peg_values.usd_per_unit
        end as native
    from list_values
    left join peg_values on peg_values.peg_currency = list_values.peg_currency and peg_values.date = list_values.date
    where list_values.value is not null
)

select * from final
