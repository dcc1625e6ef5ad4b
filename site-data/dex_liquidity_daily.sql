-- Rows of site-data/dex-liquidity-history/<id>.json: one per coin and capture day, oldest first.
with daily as (
    select * from dex_liquidity_daily
),

final as (
    select
        stablecoin_id, epoch(date)::bigint as date, liquidity_score, total_tvl_usd, pool_count, hhi, total_volume_24h_usd, activity_status,
        unavailable_reason, observed_at, methodology_version
    from daily
)

select * from final
order by stablecoin_id, date
