-- Current supply of every coin of the current universe (int_coins_supply_usd), from the valued daily
-- series, so the list, summary, chains and history agree by construction.
-- current: the coin's latest accepted daily point within its source's freshness window of as-of
-- (`window_sec`: Endpoint.currentWindowSec, e.g. 3 days for a daily point); with a fresh list capture
-- (int_coins_supply_usd), the list's own day (or, when that value was rejected, the latest accepted point
-- within its window up to the list's day), so the list, its chains and its 1/7/30-day buckets stay one
-- snapshot (its date: `supply_date`). No point within its window: current is null and
-- `supply_unavailable_reason` says why: `stale-beyond-window` (an accepted point exists, older than its
-- window) or `no-observation` (none up to as-of); `valuation-unavailable` when the point has units but no
-- USD value (int_supply_valuation_daily basis `unavailable`); a stale value never feeds totals as current;
-- prev day / week / month: the accepted points exactly 1 / 7 / 30 days before `supply_date` (null when
-- unobserved). With a list capture the list's own day is that latest point for every listed coin.
-- supply_source (spec 2.2 `supplySource`, upstream-derived labels):
--   `defillama`                   the point is from this build's DefiLlama /stablecoins list (or DefiLlama
--                                 data of that list's day);
--   `defillama-history-gap-fill`  DefiLlama history instead: /stablecoin/{id} detail or list points of
--                                 earlier builds (no list capture at as-of, or the list value was rejected);
--   `coingecko-fallback`          CoinGecko market cap / price, level-adjusted to DefiLlama.
-- Coins of the 'history' universe whose recent supply points were all rejected are dropped unless priced in
-- the 7 days up to as-of; listed and priced coins stay (with null current, `currentUnavailableReason`).
-- grain: one row per stablecoin_id. pk: (stablecoin_id)
with universe as (
    select * from int_coins_supply_usd
),

daily as (
    select * from int_supply_daily where rejection_reason is null
),

context as (
    select * from build_context
),

current_point as (
    select daily.*
    from daily
    cross join context
    inner join universe on universe.stablecoin_id = daily.stablecoin_id
    where daily.date <= coalesce(universe.list_day, context.as_of_day)
        and (daily.date = universe.list_day or epoch(daily.date) >= context.as_of - daily.window_sec)
    qualify row_number() over (partition by daily.stablecoin_id order by daily.date desc) = 1
),

last_seen as (
    select daily.stablecoin_id, max(daily.date) as date
    from daily
    cross join context
    where daily.date <= context.as_of_day
    group by daily.stablecoin_id
),

chain_source as (
    select stablecoin_id, date, source
    from int_chain_supply_points
    qualify row_number() over (partition by stablecoin_id, date order by priority, source) = 1
),

final as (
    select
        universe.stablecoin_id,
        universe.llama_id,
        universe.gecko_id,
        universe.peg_type,
        universe.peg_currency,
        universe.supply_mode,
        universe.list_day,
        universe.list_observed_at,
        universe.chains_json,
        current_point.date as supply_date,
        current_point.source as current_point_source,
        case
            when current_point.date is null then null
            when current_point.source = 'coingecko-market-cap' then 'coingecko-fallback'
            when universe.supply_mode = 'list' and current_point.date = universe.list_day then 'defillama'
            else 'defillama-history-gap-fill'
        end as supply_source,
        case
            when current_point.date is not null and current_point.circulating_usd is null then 'valuation-unavailable'
            when current_point.date is not null then null
            when last_seen.date is not null then 'stale-beyond-window'
            else 'no-observation'
        end as supply_unavailable_reason,
        current_point.valuation_basis,
        current_point.usd_per_native,
        current_point.level_adjustment,
        chain_source.source as chain_source,
        -- amounts, native peg units and USD
        current_point.circulating_native as current_native,
        current_point.circulating_usd,
        prev_day.circulating_usd as prev_day_usd,
        prev_week.circulating_usd as prev_week_usd,
        prev_month.circulating_usd as prev_month_usd
    from universe
    left join current_point on current_point.stablecoin_id = universe.stablecoin_id
    left join daily prev_day on prev_day.stablecoin_id = universe.stablecoin_id and prev_day.date = current_point.date - 1
    left join daily prev_week on prev_week.stablecoin_id = universe.stablecoin_id and prev_week.date = current_point.date - 7
    left join daily prev_month on prev_month.stablecoin_id = universe.stablecoin_id and prev_month.date = current_point.date - 30
    left join chain_source on chain_source.stablecoin_id = universe.stablecoin_id and chain_source.date = current_point.date
    left join last_seen on last_seen.stablecoin_id = universe.stablecoin_id
    where universe.supply_mode = 'list' or current_point.date is not null or universe.history_basis in ('price', 'stale-list')
)

select * from final
