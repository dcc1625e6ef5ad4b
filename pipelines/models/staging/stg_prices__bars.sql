-- Intraday price bars (CEX klines, aggregator range bars); newest capture wins per bar.
-- No look-ahead: a bar is observed at its end (`ts`), so a build as of T keeps bars with ts <= T (the
-- loader's filter tests the UTC day only: bars later on the as-of day would pass it).
-- grain: one row per source, gecko_id, quote, ts (bar end, Unix s). pk: (source, gecko_id, quote, ts)
with source as (
    select * from raw_price_bars
),

context as (
    select as_of from build_context
),

final as (
    select source.source, source.gecko_id, source.quote, source.ts, source.interval_sec, source.open, source.high, source.low, source.close
    from source
    cross join context
    where source.ts <= context.as_of
    qualify row_number() over (partition by source.source, source.gecko_id, source.quote, source.ts order by source._observed_at desc) = 1
)

select * from final
