-- Candidate per-chain supply points (native peg units) with registry chain ids, before valuation:
--   priority 1 `defillama-detail`: /stablecoin/{id} daily units per chain;
--   priority 2 `defillama-list`: this build's /stablecoins chainCirculating buckets (current and
--     1/7/30-day), dated from the capture's UTC observation day; USD-valued captures (from 2025-12-01)
--     are turned back into units as in int_supply_history_points.
-- Chain labels the registry does not know are left out (as before).
-- grain: one row per stablecoin_id, chain_id, date, source.
with coins as (
    select * from registry_coins
),

chains as (
    select * from registry_chains
),

assets as (
    select * from stg_defillama__assets
),

peg_values as (
    select * from int_peg_values_daily
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
    from stg_defillama__chain_buckets buckets
    inner join assets on assets.llama_id = buckets.llama_id
    inner join coins on coins.llama_id = buckets.llama_id
    cross join (values (0), (1), (7), (30)) as offs(days)
),

list_points as (
    select
        list_values.stablecoin_id,
        list_values.chain_label,
        list_values.date,
        case
            when list_values.circulating_unit = 'native' then list_values.value
            when list_values.price > 0 then list_values.value / list_values.price
            when peg_values.usd_per_unit > 0 then list_values.value / peg_values.usd_per_unit
        end as native,
        'defillama-list' as source,
        2 as priority
    from list_values
    left join peg_values on peg_values.peg_currency = list_values.peg_currency and peg_values.date = list_values.date
    where list_values.value is not null
),

detail_points as (
    select coins.id as stablecoin_id, detail.chain_label, detail.date, sum(detail.circulating_native) as native,
        'defillama-detail' as source, 1 as priority
    from stg_defillama__detail detail
    inner join coins on coins.llama_id = detail.llama_id
    where detail.chain_label is not null
    group by all
),

unioned as (
    select * from detail_points
    union all
    select * from list_points
),

final as (
    select
        unioned.stablecoin_id,
        chains.id as chain_id,
        unioned.chain_label as chain_name,
        unioned.date,
        unioned.native,
        unioned.source,
        unioned.priority
    from unioned
    inner join chains on chains.name = unioned.chain_label
    where unioned.native is not null and unioned.native >= 0
)

select * from final
