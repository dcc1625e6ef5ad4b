-- Share of non-USD peg groups in listed supply, on days where the whole listed universe was observed.
-- grain: one row per date. pk: (date)
with points as (
    select h.date, h.circulating_usd, c.peg_currency
    from supply_history_daily h
    inner join registry_coins c on c.id = h.stablecoin_id
    where h.source = 'defillama-list' and h.circulating_usd is not null
),

by_day as (
    select
        date,
        sum(circulating_usd) as total_usd,
        coalesce(sum(circulating_usd) filter (where peg_currency in ('XAU', 'XAG')), 0) as commodity_usd,
        coalesce(sum(circulating_usd) filter (where peg_currency not in ('USD', 'XAU', 'XAG')), 0) as fiat_non_usd_usd
    from points
    group by date
),

final as (
    select
        date,
        round(total_usd, 2) as total_usd,
        round(commodity_usd, 2) as commodity_usd,
        round(fiat_non_usd_usd, 2) as fiat_non_usd_usd,
        round(commodity_usd / total_usd * 100, 4) as commodity_share_pct,
        round(fiat_non_usd_usd / total_usd * 100, 4) as fiat_non_usd_share_pct
    from by_day
    where total_usd > 0
)

select * from final
