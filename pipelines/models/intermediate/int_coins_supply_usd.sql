-- The current coin universe and a PROVISIONAL current USD supply (peg monitor floors, peer filter of the
-- peg references; published values: int_coins_supply_current).
-- Universe: with a FRESH DefiLlama list capture (observed at or before as-of and at most its freshness
-- window before it, `source_current_windows` of `defillama.stablecoins`: 2 days) (`supply_mode` = 'list'),
-- every listed asset (unreviewed upstream coins included: the registry loader adds them); without one
-- ('history'; an older list counts as history only), every registry coin with a supply point within its
-- source's freshness window (`window_sec`, e.g. 3 days for a daily point) up to as-of, and every registry coin
-- alive at as-of with a price observation in the 7 days up to as-of (priced before its supply is known: it is
-- listed with its price and a null current supply, `currentUnavailableReason`); a dead coin stays 30 days after its death.
-- When neither exists (every input past its window), the newest list's coins, each with a null current supply.
-- grain: one row per stablecoin_id. pk: (stablecoin_id)
with assets as (
    select * from stg_defillama__assets
),

coins as (
    select * from registry_coins
),

context as (
    select * from build_context
),

points as (
    select * from int_supply_history_points
),

-- the list is current only within its freshness window; an older one is history (its dated points stay)
fresh_assets as (
    select assets.*
    from assets
    cross join context
    inner join source_current_windows windows on windows.raw_table = 'raw_defillama__stablecoins'
    where context.as_of - assets.observed_at <= windows.window_sec
),

list_mode as (
    select count(*) > 0 as has_list from fresh_assets
),

listed as (
    select
        coins.id as stablecoin_id,
        assets.llama_id,
        assets.gecko_id as list_gecko_id,
        assets.chains_json,
        cast(make_timestamp(assets.observed_at * 1000000) as date) as list_day,
        assets.observed_at as list_observed_at
    from fresh_assets assets
    inner join coins on coins.llama_id = assets.llama_id
),

history_universe as (
    select stablecoin_id, llama_id, list_gecko_id, chains_json, list_day, list_observed_at, history_basis
    from (
        select points.stablecoin_id, coins.llama_id, null::varchar as list_gecko_id, null::varchar as chains_json,
            null::date as list_day, null::bigint as list_observed_at, 'supply' as history_basis, 1 as rank_
        from points
        cross join context
        inner join coins on coins.id = points.stablecoin_id
        where points.date <= context.as_of_day and epoch(points.date) >= context.as_of - points.window_sec
        union all
        select obs.stablecoin_id, coins.llama_id, null::varchar, null::varchar, null::date, null::bigint, 'price' as history_basis, 2 as rank_
        from int_price_observations obs
        cross join context
        inner join coins on coins.id = obs.stablecoin_id
        -- alive, or dead less than 30 days after its death period ended (DEATH_GRACE_DAYS, pipelines/analytics/stress-signals.ts)
    where obs.ts > context.as_of - 7 * 86400 and (not coins.is_dead or context.as_of_day < cast(coins.death_known_on as date) + 31)
    )
    qualify row_number() over (partition by stablecoin_id order by rank_) = 1
),

-- nothing current at all (a live build long after every recorded input): the newest list's coins are still
-- the universe, each with a null current supply (past its window), rather than no build
stale_listed as (
    select coins.id as stablecoin_id, assets.llama_id, assets.gecko_id as list_gecko_id, assets.chains_json,
        null::date as list_day, null::bigint as list_observed_at, 'stale-list' as history_basis
    from assets
    inner join coins on coins.llama_id = assets.llama_id
),

history_count as (
    select count(*) as n from history_universe
),

universe as (
    select *, null::varchar as history_basis, 'list' as supply_mode from listed
    union all
    select history_universe.*, 'history' as supply_mode from history_universe, list_mode where not list_mode.has_list
    union all
    select stale_listed.*, 'history' as supply_mode
    from stale_listed, list_mode, history_count
    where not list_mode.has_list and history_count.n = 0
),

latest_point as (
    select points.stablecoin_id, points.date, points.usd
    from points
    cross join context
    inner join universe on universe.stablecoin_id = points.stablecoin_id
    -- a point of the (fresh) list's own day, else one within its source's freshness window of as-of
    where points.date <= coalesce(universe.list_day, context.as_of_day)
        and (points.date = universe.list_day or epoch(points.date) >= context.as_of - points.window_sec)
        and points.usd is not null
    qualify row_number() over (partition by points.stablecoin_id order by points.date desc, points.priority, points.source) = 1
),

final as (
    select
        universe.stablecoin_id,
        universe.llama_id,
        coalesce(coins.gecko_id, universe.list_gecko_id) as gecko_id,
        coins.peg_type,
        coins.peg_currency,
        universe.supply_mode,
        universe.list_day,
        universe.list_observed_at,
        universe.chains_json,
        -- history mode: 'supply' (a supply point within its window), 'price' (priced only) or 'stale-list' (nothing
        -- current at all: the newest list's coins, supply null); null in list mode
        universe.history_basis,
        -- amounts, USD (provisional)
        latest_point.usd as circulating_usd
    from universe
    inner join coins on coins.id = universe.stablecoin_id
    left join latest_point on latest_point.stablecoin_id = universe.stablecoin_id
)

select * from final
