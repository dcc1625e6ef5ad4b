-- Per-chain supply of every current coin, USD, with registry chain ids, before rejection.
-- Chains come from the best chain source on the coin's current point day (`supply_date` of
-- int_coins_supply_current: the list's chainCirculating, or /stablecoin/{id} detail without a list);
-- prev day / week / month from the same source 1 / 7 / 30 days earlier. Every value is native units x
-- int_supply_valuation_daily of its own day (the one valuation rule).
-- rejection_reason: `above-10t-usd` (any value above $10T) or `over-100x-previous-day` (current above
-- 100x the previous day when that is at least $1M); rejected rows are left out of the chain tables and
-- written to supply_value_rejections.
-- grain: one row per stablecoin_id, chain_id. pk: (stablecoin_id, chain_id)
with current_coins as (
    select * from int_coins_supply_current where chain_source is not null
),

points as (
    select * from int_chain_supply_points
),

valuation as (
    select * from int_supply_valuation_daily
),

valued_points as (
    select points.*, points.native * valuation.usd_per_native as usd
    from points
    left join valuation on valuation.stablecoin_id = points.stablecoin_id and valuation.date = points.date
),

chain_rows as (
    select
        current_coins.stablecoin_id,
        cur.chain_id,
        cur.chain_name,
        cur.source,
        current_coins.supply_date as date,
        cur.usd as circulating_usd,
        prev_day.usd as prev_day_usd,
        prev_week.usd as prev_week_usd,
        prev_month.usd as prev_month_usd
    from current_coins
    inner join valued_points cur
        on cur.stablecoin_id = current_coins.stablecoin_id and cur.date = current_coins.supply_date and cur.source = current_coins.chain_source
    left join valued_points prev_day
        on prev_day.stablecoin_id = cur.stablecoin_id and prev_day.chain_id = cur.chain_id and prev_day.source = cur.source and prev_day.date = cur.date - 1
    left join valued_points prev_week
        on prev_week.stablecoin_id = cur.stablecoin_id and prev_week.chain_id = cur.chain_id and prev_week.source = cur.source and prev_week.date = cur.date - 7
    left join valued_points prev_month
        on prev_month.stablecoin_id = cur.stablecoin_id and prev_month.chain_id = cur.chain_id and prev_month.source = cur.source and prev_month.date = cur.date - 30
),

final as (
    select
        *,
        case
            when greatest(circulating_usd, prev_day_usd, prev_week_usd, prev_month_usd) > 1e13 then 'above-10t-usd'
            when prev_day_usd >= 1e6 and circulating_usd > 100 * prev_day_usd then 'over-100x-previous-day'
        end as rejection_reason
    from chain_rows
)

select * from final
