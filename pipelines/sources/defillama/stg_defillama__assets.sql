-- DefiLlama /stablecoins list, one row per asset of the newest capture at or before as-of.
-- grain: one row per llama_id. pk: (llama_id)
with source as (
    select * from raw_defillama__stablecoins
),

newest as (
    select * from source
    qualify row_number() over (partition by llama_id order by _observed_at desc) = 1
),

final as (
    select
        -- ids
        llama_id,
        gecko_id,
        name,
        symbol,
        peg_type,
        peg_mechanism,
        price_source,
        -- amounts (in circulating_unit: native peg units before 2025-12-01, USD after)
        price,
        circulating_unit,
        try_cast(json_extract_string(buckets_json, '$.current.' || peg_type) as double) as current_value,
        try_cast(json_extract_string(buckets_json, '$.circulatingPrevDay.' || peg_type) as double) as prev_day_value,
        try_cast(json_extract_string(buckets_json, '$.circulatingPrevWeek.' || peg_type) as double) as prev_week_value,
        try_cast(json_extract_string(buckets_json, '$.circulatingPrevMonth.' || peg_type) as double) as prev_month_value,
        chains_json,
        chain_buckets_json,
        is_deprecated,
        -- timestamps
        observed_at
    from newest
)

select * from final
