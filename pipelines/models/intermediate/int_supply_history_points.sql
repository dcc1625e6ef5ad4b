-- Candidate daily supply points per coin from every supply source, before choosing one per day.
-- Every source is reduced to native peg units (`native`), the one quantity the valuation rule
-- (int_supply_valuation_daily) turns into USD:
--   priority 1 `defillama-detail`: /stablecoin/{id} daily units (the upstream total, else the sum of chains);
--   priority 2 `defillama-list`: this build's /stablecoins capture, current and 1/7/30-day buckets
--     (int_list_supply_units);
--   priority 3 `defillama-list`: list points persisted by earlier builds (hist_supply_snapshots);
--   priority 4 `coingecko-market-cap`: market cap / CoinGecko price of the day (the chart's own price,
--     else CoinGecko's daily price as republished by Alchemy, a declared copy: a market-cap scrape carries
--     no price; a positive price no higher than 1.19 x the peg's unit value). Without one, / the peg's unit
--     value for fixed pegs, and int_supply_daily divides `market_cap_usd` by the coin's accepted consensus
--     price instead when one exists. DAI 2023-03-12: 5,212,488,434 / 0.96699 = 5.390 B units (not 5.212 B).
-- `window_sec`: the freshness window of the point's source (Endpoint.currentWindowSec of its `raw_table`, via
-- source_current_windows): a point older than it is history, never the current supply.
-- `usd` is PROVISIONAL: native x the fixed peg's unit value of the day (USD 1, ECB rate), or for other
-- pegs x the day's median positive quote (carried up to 7 days). It only feeds the peg monitor's supply
-- floors and the peer filter of the peg references; every published USD figure is valued by
-- int_supply_valuation_daily with accepted consensus prices.
-- grain: one row per stablecoin_id, date, source, priority.
with coins as (
    select * from registry_coins
),

context as (
    select * from build_context
),

peg_values as (
    select * from int_peg_values_daily
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
    select coins.id as stablecoin_id, detail.date, detail.native, 'defillama-detail' as source, 1 as priority,
        'raw_defillama__stablecoin_detail' as raw_table, null::double as market_cap_usd
    from detail
    inner join coins on coins.llama_id = detail.llama_id
),

list_points as (
    select stablecoin_id, date, native, 'defillama-list' as source, 2 as priority,
        'raw_defillama__stablecoins' as raw_table, null::double as market_cap_usd
    from int_list_supply_units
    where chain_label is null
),

persisted_points as (
    select
        snapshots.stablecoin_id,
        snapshots.date,
        coalesce(snapshots.native, snapshots.usd / nullif(peg_values.usd_per_unit, 0)) as native,
        snapshots.source,
        3 as priority,
        'raw_defillama__stablecoins' as raw_table,
        null::double as market_cap_usd
    from hist_supply_snapshots snapshots
    cross join context
    inner join coins on coins.id = snapshots.stablecoin_id
    left join peg_values on peg_values.peg_currency = coins.peg_currency and peg_values.date = snapshots.date
    where snapshots.date <= context.as_of_day
),

-- CoinGecko's own daily price as Alchemy republishes it (equal on 857/857 shared days), for market caps without one
coingecko_copy_prices as (
    select gecko_id, date, price_usd from stg_prices__daily where source = 'alchemy'
),

market_caps as (
    select
        coins.id as stablecoin_id,
        coins.peg_currency,
        chart.date,
        chart.market_cap_usd,
        coalesce(chart.price_usd, copies.price_usd) as price_usd
    from stg_coingecko__market_chart chart
    inner join coins on coins.gecko_id = chart.gecko_id
    left join coingecko_copy_prices copies on copies.gecko_id = chart.gecko_id and copies.date = chart.date
    where chart.market_cap_usd is not null
),

market_cap_points as (
    select
        market_caps.stablecoin_id,
        market_caps.date,
        case
            when market_caps.price_usd > 0
                and (peg_values.usd_per_unit is null or market_caps.price_usd <= 1.19 * peg_values.usd_per_unit)
                then market_caps.market_cap_usd / market_caps.price_usd
            when peg_values.usd_per_unit > 0 then market_caps.market_cap_usd / peg_values.usd_per_unit
        end as native,
        'coingecko-market-cap' as source,
        4 as priority,
        'raw_coingecko__market_chart' as raw_table,
        -- kept only when the units above are market cap / the peg's unit value (no usable CoinGecko price)
        case when not coalesce(market_caps.price_usd > 0
                and (peg_values.usd_per_unit is null or market_caps.price_usd <= 1.19 * peg_values.usd_per_unit), false)
            then market_caps.market_cap_usd end as market_cap_usd
    from market_caps
    left join peg_values on peg_values.peg_currency = market_caps.peg_currency and peg_values.date = market_caps.date
),

candidates as (
    select * from detail_points
    union all select * from list_points
    union all select * from persisted_points
    union all select * from market_cap_points
),

-- provisional unit value for the peg monitor: fixed pegs as published, other pegs the day's median quote
quote_days as (
    select stablecoin_id, cast(make_timestamp(ts * 1000000) as date) as date, median(price_usd) as price_usd
    from int_price_observations
    where price_usd > 0
    group by all
),

with_fixed as (
    select candidates.*, coins.peg_currency, coins.nav_token or coins.floating_peg as market_valued, peg_values.usd_per_unit as fixed_usd
    from candidates
    inner join coins on coins.id = candidates.stablecoin_id
    left join peg_values on peg_values.peg_currency = coins.peg_currency and peg_values.date = candidates.date
),

final as (
    select
        with_fixed.stablecoin_id,
        with_fixed.date,
        with_fixed.native,
        with_fixed.native * case
            when not with_fixed.market_valued and with_fixed.fixed_usd is not null then with_fixed.fixed_usd
            when quote_days.date >= with_fixed.date - 7 then quote_days.price_usd
        end as usd,
        with_fixed.source,
        with_fixed.priority,
        with_fixed.market_cap_usd,
        windows.window_sec
    from with_fixed
    left join source_current_windows windows on windows.raw_table = with_fixed.raw_table
    asof left join quote_days on quote_days.stablecoin_id = with_fixed.stablecoin_id and quote_days.date <= with_fixed.date
    where with_fixed.native is not null and with_fixed.native >= 0
)

select * from final
