-- Share of non-USD peg groups in listed supply, on days where the whole listed universe was observed
-- (listed_supply_daily). Groups: `commodity` (gold/silver pegs), `floating` (floating pegs: CPI-indexed,
-- redemption-rate targets; peggedVAR), `fiat_non_usd` (every other non-USD peg currency, incl. `OTHER`);
-- NAV tokens count with their peg currency. Floating pegs were counted as non-USD fiat before they got
-- their own group. Percent shares 0-100, 4 dp; USD sums 2 dp.
-- grain: one row per date. pk: (date)
with points as (
    select * from listed_supply_daily
),

by_day as (
    select
        date,
        sum(circulating_usd order by stablecoin_id) as total_usd,
        coalesce(sum(circulating_usd order by stablecoin_id) filter (where peg_group = 'usd'), 0) as usd_peg_usd,
        coalesce(sum(circulating_usd order by stablecoin_id) filter (where peg_group = 'commodity'), 0) as commodity_usd,
        coalesce(sum(circulating_usd order by stablecoin_id) filter (where peg_group = 'fiat-non-usd'), 0) as fiat_non_usd_usd,
        coalesce(sum(circulating_usd order by stablecoin_id) filter (where peg_group = 'floating'), 0) as floating_usd
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
        round(fiat_non_usd_usd / total_usd * 100, 4) as fiat_non_usd_share_pct,
        round(floating_usd, 2) as floating_usd,
        round(floating_usd / total_usd * 100, 4) as floating_share_pct,
        round(usd_peg_usd, 2) as usd_peg_usd,
        round(usd_peg_usd / total_usd * 100, 4) as usd_share_pct
    from by_day
    where total_usd > 0
)

select * from final
