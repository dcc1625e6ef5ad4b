-- /api/dex-liquidity-history/{id}: one row per coin (one file per stablecoin_id) and capture day, oldest
-- first (date: the capture's UTC day, Unix s; observedAt: the capture time, Unix s).
with daily as (
    select * from dex_liquidity_daily
),

final as (
    select
        stablecoin_id,
        epoch(date)::double as date,
        liquidity_score::double as liquidityScore,
        coalesce(total_tvl_usd, 0)::double as totalTvlUsd,
        coalesce(pool_count, 0)::double as poolCount,
        hhi::double as hhi,
        total_volume_24h_usd::double as totalVolume24hUsd,
        activity_status as activityStatus,
        unavailable_reason as liquidityScoreUnavailableReason,
        observed_at::double as observedAt,
        methodology_version as methodologyVersion
    from daily
    order by daily.stablecoin_id, daily.date
)

select * from final
