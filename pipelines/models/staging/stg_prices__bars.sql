-- Intraday price bars (CEX klines, aggregator range bars); newest capture wins per bar.
-- grain: one row per source, gecko_id, quote, ts (bar end, Unix s). pk: (source, gecko_id, quote, ts)
with source as (
    select * from raw_price_bars
),

final as (
    select source, gecko_id, quote, ts, interval_sec, open, high, low, close
    from source
    qualify row_number() over (partition by source, gecko_id, quote, ts order by _observed_at desc) = 1
)

select * from final
