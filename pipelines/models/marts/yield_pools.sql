-- Yield pools: one row per pool of the newest DefiLlama `/pools` capture observed at or before as-of
-- (empty without one: the default build as of 2025-09-07 has no pool capture). `chain` is the registry
-- chain id (see stg_defillama__yield_pools), `chain_label` the upstream label; `tvl_usd` USD; APY
-- fields percent (2.84 = 2.84 %), null when the upstream has none (never 0); `is_stablecoin` is
-- DefiLlama's own symbol heuristic, not our matching (see pool_coin_matches); `observed_at` Unix s;
-- `underlying_tokens_json` the upstream token addresses (JSON array text, null when not given: the
-- recorded sample carries none); volumes USD, null when unknown.
-- grain: one row per pool. pk: (pool_id)
with pools as (
    select * from stg_defillama__yield_pools
),

newest as (
    select *
    from pools
    qualify observed_at = max(observed_at) over ()
),

final as (
    select
        pool_id,
        project,
        chain_id as chain,
        chain_label,
        symbol,
        tvl_usd,
        apy,
        apy_base,
        apy_reward,
        apy_pct_1d,
        apy_pct_7d,
        apy_pct_30d,
        is_stablecoin,
        il_risk,
        exposure,
        pool_meta,
        outlier,
        observed_at,
        underlying_tokens_json,
        reward_tokens_json,
        volume_usd_1d,
        volume_usd_7d
    from newest
)

select * from final
order by pool_id
