-- Per-chain supply buckets of the DefiLlama list.
-- grain: one row per llama_id, chain_label. pk: (llama_id, chain_label)
with assets as (
    select * from stg_defillama__assets
),

unnested as (
    select
        assets.llama_id,
        assets.peg_type,
        chains.key as chain_label,
        chains.value as buckets
    from assets, json_each(assets.chain_buckets_json) as chains
),

final as (
    select
        llama_id,
        chain_label,
        try_cast(json_extract_string(buckets, '$.current.' || peg_type) as double) as current_value,
        try_cast(json_extract_string(buckets, '$.circulatingPrevDay.' || peg_type) as double) as prev_day_value,
        try_cast(json_extract_string(buckets, '$.circulatingPrevWeek.' || peg_type) as double) as prev_week_value,
        try_cast(json_extract_string(buckets, '$.circulatingPrevMonth.' || peg_type) as double) as prev_month_value
    from unnested
    where chain_label <> 'TotalCirculating'
)

select * from final
