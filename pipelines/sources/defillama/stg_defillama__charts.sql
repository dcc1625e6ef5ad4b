-- DefiLlama /stablecoincharts/{chain} daily aggregate supply; newest capture wins per key.
-- grain: one row per chart, date, peg_type. pk: (chart, date, peg_type)
with source as (
    select * from raw_defillama__stablecoincharts
),

final as (
    select
        chart,
        cast(date as date) as date,
        peg_type,
        circulating_usd,
        circulating_native
    from source
    qualify row_number() over (partition by chart, date, peg_type order by _observed_at desc) = 1
)

select * from final
