-- Aggregate supply chart: our listed universe (`ballast-listed`, listed_supply_daily: one valuation rule,
-- a key per pegType plus `total`) on days a list observed it; DefiLlama's all-chain totals
-- (`defillama-all`, only `total`; includes assets we do not list) on other days.
-- grain: one row per date, peg_type. pk: (date, peg_type)
with upstream as (
    select date, 'defillama-all' as aggregate_universe, peg_type, circulating_usd
    from stg_defillama__charts
    where chart = 'all'
),

listed_points as (
    select * from listed_supply_daily
),

listed_by_peg as (
    select date, 'ballast-listed' as aggregate_universe, peg_type, sum(circulating_usd order by stablecoin_id) as circulating_usd
    from listed_points
    group by date, peg_type
),

listed_total as (
    select date, 'ballast-listed' as aggregate_universe, 'total' as peg_type, sum(circulating_usd order by stablecoin_id) as circulating_usd
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
