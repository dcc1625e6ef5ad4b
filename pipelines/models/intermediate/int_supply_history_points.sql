-- Candidate daily supply points per coin from every history source, before choosing one per day.
-- grain: one row per stablecoin_id, date, source.
with coins as (
    select * from registry_coins
),

context as (
    select * from build_context
),

detail_totals as (
    select llama_id, date, sum(circulating_native) as native
    from stg_defillama__detail
    where chain_label is null
    group by llama_id, date
),

detail_chain_sums as (
    select llama_id, date, sum(circulating_native) as native
    from stg_defillama__detail
    where chain_label is not null
    group by llama_id, date
),

detail as (
    select coalesce(t.llama_id, c.llama_id) as llama_id, coalesce(t.date, c.date) as date, coalesce(t.native, c.native) as native
    from detail_totals t
    full outer join detail_chain_sums c on c.llama_id = t.llama_id and c.date = t.date
),

detail_points as (
    select coins.id as stablecoin_id, detail.date, detail.native, cast(null as double) as usd, 'defillama-detail' as source, 1 as priority
    from detail
    inner join coins on coins.llama_id = detail.llama_id
),

list_points as (
    select stablecoin_id, context.as_of_day - offs.days as date,
        case offs.days when 0 then current_native end as native,
        case offs.days when 0 then circulating_usd when 1 then prev_day_usd when 7 then prev_week_usd else prev_month_usd end as usd,
        'defillama-list' as source, 2 as priority
    from int_coins_supply_usd, context, (values (0), (1), (7), (30)) as offs(days)
),

persisted_points as (
    select stablecoin_id, date, native, usd, source, 3 as priority
    from hist_supply_snapshots, context
    where date <= context.as_of_day
),

market_cap_points as (
    select coins.id as stablecoin_id, chart.date,
        case when chart.price_usd > 0 then chart.market_cap_usd / chart.price_usd end as native,
        chart.market_cap_usd as usd,
        'coingecko-market-cap' as source, 4 as priority
    from stg_coingecko__market_chart chart
    inner join coins on coins.gecko_id = chart.gecko_id
    where chart.market_cap_usd is not null
),

final as (
    select * from detail_points
    union all select * from list_points where usd is not null or native is not null
    union all select * from persisted_points
    union all select * from market_cap_points
)

select * from final
