-- One supply point per coin and UTC day, valued and plausibility-checked (before rejection).
-- Native units: the day's best source (detail > this build's list > persisted list > CoinGecko market
-- cap; int_supply_history_points). Sources measure slightly different things (CoinGecko's circulating
-- supply runs ~0.3-0.7% below DefiLlama's for USDT/USDC), so a day filled by a lower-priority source is
-- LEVEL-ADJUSTED to the better source: native x r, where r = better / fallback units on the days both
-- report ("anchors", kept when 0.8 <= r <= 1.25). Between two anchors at most 60 days apart r is
-- interpolated linearly; otherwise each side's r fades linearly to 1 over 30 days. A source switch then
-- never makes the series jump back and forth; better-source days are never changed.
-- A CoinGecko market cap without a usable CoinGecko price of its day (`market_cap_usd` of
-- int_supply_history_points) is divided by the coin's accepted consensus price at the point's 00:00 UTC
-- instant (the last 15-minute slot at or before it, at most 1 day old, never after as-of) rather than by
-- the peg's unit value: DAI on 2023-03-12 is 5.212 B / 0.96699 = 5.390 B units, not 5.212 B.
-- `window_sec`: the freshness window of the point's source (int_supply_history_points).
-- USD: native x int_supply_valuation_daily (the one valuation rule).
-- Plausibility (rejection_reason, rows are dropped from every published supply table and written to
-- supply_value_rejections):
--   `above-10t-usd`: USD supply above $10T;
--   `over-100x-previous-day`: above 100x the coin's previous point (at most 7 days earlier) when that
--     point is at least $1M (the floor keeps launches and near-zero coins from tripping the rule).
-- grain: one row per stablecoin_id, date. pk: (stablecoin_id, date)
with points as (
    select * from int_supply_history_points
),

valuation as (
    select * from int_supply_valuation_daily
),

coins as (
    select * from registry_coins
),

context as (
    select * from build_context
),

slots as (
    select slots.stablecoin_id, slots.slot_ts, slots.price
    from price_consensus_slots slots
    cross join context
    where slots.price > 0 and slots.slot_ts <= context.as_of
),

first_candidates as (
    select stablecoin_id, date, source, priority, native, market_cap_usd, window_sec
    from points
    qualify row_number() over (partition by stablecoin_id, date, source order by priority) = 1
),

candidates as (
    select
        first_candidates.stablecoin_id,
        first_candidates.date,
        first_candidates.source,
        first_candidates.priority,
        case
            when first_candidates.market_cap_usd is not null and slot.slot_ts > epoch(first_candidates.date) - 86400
                then first_candidates.market_cap_usd / slot.price
            else first_candidates.native
        end as native,
        first_candidates.window_sec
    from first_candidates
    asof left join slots slot on slot.stablecoin_id = first_candidates.stablecoin_id
        and slot.slot_ts <= epoch(first_candidates.date)
),

best as (
    select * from candidates
    qualify row_number() over (partition by stablecoin_id, date order by priority, source) = 1
),

anchors as (
    select candidates.stablecoin_id, candidates.source, candidates.date, best.native / candidates.native as ratio
    from candidates
    inner join best on best.stablecoin_id = candidates.stablecoin_id and best.date = candidates.date
    where best.priority < candidates.priority and best.source <> candidates.source
        and candidates.native > 0 and best.native > 0
        and best.native / candidates.native between 0.8 and 1.25
),

with_anchors as (
    select
        best.*,
        prev.date as prev_date,
        prev.ratio as prev_ratio,
        next.date as next_date,
        next.ratio as next_ratio
    from best
    asof left join anchors prev on prev.stablecoin_id = best.stablecoin_id and prev.source = best.source and prev.date <= best.date
    asof left join anchors next on next.stablecoin_id = best.stablecoin_id and next.source = best.source and next.date >= best.date
),

adjusted as (
    select
        *,
        case
            when prev_date is not null and next_date is not null and next_date - prev_date <= 60
                then prev_ratio + (next_ratio - prev_ratio) * (date - prev_date) / (next_date - prev_date)
            else 1.0
                + coalesce((prev_ratio - 1.0) * greatest(0.0, 1.0 - (date - prev_date) / 30.0), 0.0)
                + coalesce((next_ratio - 1.0) * greatest(0.0, 1.0 - (next_date - date) / 30.0), 0.0)
        end as level_adjustment
    from with_anchors
),

valued as (
    select
        adjusted.stablecoin_id,
        adjusted.date,
        coins.peg_type,
        adjusted.source,
        adjusted.priority,
        adjusted.level_adjustment,
        adjusted.window_sec,
        adjusted.native * adjusted.level_adjustment as circulating_native,
        adjusted.native * adjusted.level_adjustment * valuation.usd_per_native as circulating_usd,
        valuation.usd_per_native,
        valuation.valuation_basis
    from adjusted
    inner join coins on coins.id = adjusted.stablecoin_id
    left join valuation on valuation.stablecoin_id = adjusted.stablecoin_id and valuation.date = adjusted.date
),

with_previous as (
    select
        *,
        lag(circulating_usd) over (partition by stablecoin_id order by date) as prev_usd,
        lag(date) over (partition by stablecoin_id order by date) as prev_date
    from valued
),

final as (
    select
        stablecoin_id,
        date,
        peg_type,
        source,
        priority,
        level_adjustment,
        circulating_native,
        circulating_usd,
        usd_per_native,
        valuation_basis,
        window_sec,
        case
            when circulating_usd > 1e13 then 'above-10t-usd'
            when prev_usd >= 1e6 and date - prev_date <= 7 and circulating_usd > 100 * prev_usd then 'over-100x-previous-day'
        end as rejection_reason
    from with_previous
)

select * from final
