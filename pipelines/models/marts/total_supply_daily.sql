-- Aggregate supply chart: DefiLlama's all-chain totals where recorded, our listed universe elsewhere.
-- grain: one row per date, peg_type. pk: (date, peg_type)
with upstream as (
    select date, 'defillama-all' as aggregate_universe, peg_type, circulating_usd
    from stg_defillama__charts
    where chart = 'all'
),

listed_points as (
    select h.date, h.stablecoin_id, c.peg_type, h.circulating_usd
    from supply_history_daily h
    inner join registry_coins c on c.id = h.stablecoin_id
    where h.source = 'defillama-list'
),

listed_by_peg as (
    select date, 'ballast-listed' as aggregate_universe, peg_type, sum(circulating_usd) as circulating_usd
    from listed_points
    group by date, peg_type
),

listed_total as (
    select date, 'ballast-listed' as aggregate_universe, 'total' as peg_type, sum(circulating_usd) as circulating_usd
    from listed_points
    group by date
),

listed as (
    select * from listed_by_peg
    union all
    select * from listed_total
),

final as (
    select * from listed
    union all
    select * from upstream where date not in (select date from listed)
)

select * from final
