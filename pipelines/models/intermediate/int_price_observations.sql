-- Every USD price observation of a registry coin, historical and current, with its evidence category.
-- Join keys: archives and CoinGecko quotes by CoinGecko id; the DefiLlama list's current quote by the
-- list's own DefiLlama id (its gecko_id can differ from the registry's).
-- Daily archives are stamped at 00:00 UTC; bars at their end; USDT-quoted bars are converted with the
-- same day's USDT/USD median across daily sources (bars without it are left out).
-- grain: one row per stablecoin_id, source, ts. pk: (stablecoin_id, source, ts)
with coins as (
    select * from registry_coins
),

daily as (
    select
        gecko_id, null::varchar as llama_id, source, epoch(date)::bigint as ts, 86400 as interval_sec,
        price_usd, price_usd as low_usd, price_usd as high_usd,
        'backfill' as kind, 'upstream' as observed_at_mode
    from stg_prices__daily
),

usdt_daily as (
    select date, median(price_usd) as usd_per_usdt
    from stg_prices__daily
    where gecko_id = 'tether'
    group by date
),

-- USD bars at 1.0; USDT bars by an equi-join on their UTC day (an `or` in the join condition made it a
-- bars × days comparison, quadratic in the history's length).
quoted_bars as (
    select bars.*, 1.0 as usd_per_quote
    from stg_prices__bars bars
    where bars.quote = 'USD'
    union all
    select bars.*, usdt_daily.usd_per_usdt as usd_per_quote
    from stg_prices__bars bars
    inner join usdt_daily
        on bars.quote = 'USDT'
        and usdt_daily.date = cast(make_timestamp((bars.ts - 1) * 1000000) as date)
),

bars as (
    select
        gecko_id, null::varchar as llama_id, source, ts, interval_sec,
        close * usd_per_quote as price_usd,
        low * usd_per_quote as low_usd,
        high * usd_per_quote as high_usd,
        'backfill' as kind, 'upstream' as observed_at_mode
    from quoted_bars
),

list_current as (
    select
        null::varchar as gecko_id, llama_id, 'defillama' as source, observed_at as ts, 0 as interval_sec,
        price as price_usd, price as low_usd, price as high_usd,
        'live' as kind, 'local_fetch' as observed_at_mode
    from stg_defillama__assets
    where price is not null
),

markets_current as (
    select
        gecko_id, null::varchar as llama_id, 'coingecko' as source, coalesce(last_updated_at, observed_at) as ts, 0 as interval_sec,
        price_usd, price_usd as low_usd, price_usd as high_usd,
        'live' as kind, case when last_updated_at is null then 'local_fetch' else 'upstream' end as observed_at_mode
    from stg_coingecko__markets
    where price_usd is not null
),

unioned as (
    select * from daily
    union all select * from bars
    union all select * from list_current
    union all select * from markets_current
),

final as (
    select
        coins.id as stablecoin_id,
        coins.peg_type,
        coins.peg_currency,
        unioned.source,
        case when unioned.source = 'binance' then 'CEX' else 'off-chain' end as category,
        unioned.kind,
        unioned.ts,
        unioned.interval_sec,
        unioned.price_usd,
        unioned.low_usd,
        unioned.high_usd,
        unioned.observed_at_mode
    from unioned
    inner join coins on (unioned.llama_id is not null and coins.llama_id = unioned.llama_id)
        or (unioned.llama_id is null and coins.gecko_id = unioned.gecko_id)
    where unioned.ts <= (select as_of from build_context)
)

select * from final
