-- The listed universe per day: on every day a DefiLlama /stablecoins list observed (this build's capture
-- and its 1/7/30-day buckets, plus list points persisted by earlier builds), each coin it listed with
-- that day's published supply (supply_history_daily: same source choice, level adjustment and
-- valuation rule as every other supply figure). Rejected or unvalued points contribute nothing.
-- Feeds the `ballast-listed` aggregate of total_supply_daily and non_usd_share_daily.
-- grain: one row per stablecoin_id, date. pk: (stablecoin_id, date)
with listed as (
    select distinct stablecoin_id, date
    from int_supply_history_points
    where source = 'defillama-list'
),

history as (
    select * from supply_history_daily
),

coins as (
    select * from registry_coins
),

final as (
    select
        listed.stablecoin_id,
        listed.date,
        coins.peg_type,
        coins.peg_currency,
        coins.nav_token,
        coins.floating_peg,
        -- peg group of the non-USD share: floating pegs, gold/silver (NAV tokens count with their peg
        -- currency), other non-USD fiat (incl. `OTHER`), USD
        case
            when coins.floating_peg or coins.peg_currency = 'VAR' then 'floating'
            when coins.peg_currency in ('XAU', 'XAG', 'GOLD', 'SILVER') then 'commodity'
            when coins.peg_currency <> 'USD' then 'fiat-non-usd'
            else 'usd'
        end as peg_group,
        history.circulating_usd
    from listed
    inner join coins on coins.id = listed.stablecoin_id
    inner join history on history.stablecoin_id = listed.stablecoin_id and history.date = listed.date
    where history.circulating_usd is not null
)

select * from final
