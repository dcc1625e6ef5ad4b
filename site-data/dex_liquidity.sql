-- Rows of site-data/dex-liquidity.json: one per coin of the DEX liquidity universe (newest capture day).
with scores as (
    select * from dex_liquidity
),

final as (
    select
        stablecoin_id, symbol, liquidity_score, depth_score, activity_score, concentration_score, spread_score, pool_count_score,
        total_tvl_usd, pool_count, protocol_count, chain_count, hhi, total_volume_24h_usd, total_volume_7d_usd, volume_coverage_share,
        activity_status, unavailable_reason, warning, top_pools_json, chains_json, protocols_json, observed_at, methodology_version
    from scores
)

select * from final
order by stablecoin_id
