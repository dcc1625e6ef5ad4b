-- DefiLlama yields `/pools`: every pool of every capture observed at or before as-of (no look-ahead:
-- a capture observed later the same UTC day is left out). `chain_id` is the registry chain whose
-- display name equals the upstream label (case-insensitive), else the label's slug (`Plasma` →
-- `plasma`, the form registry contract deployments use); `chain_label` keeps the upstream label.
-- APY fields are percent and stay null when the upstream leaves them empty (never 0).
-- grain: one row per capture and pool. pk: (observed_at, pool_id)
with source as (
    select * from raw_defillama__yield_pools
),

context as (
    select as_of from build_context
),

chains as (
    select id, lower(name) as name_key from registry_chains
),

observed as (
    select source.*
    from source
    cross join context
    where source._observed_at <= context.as_of
),

final as (
    select
        observed._observed_at as observed_at,
        cast(observed.observed_day as date) as observed_day,
        observed.pool_id,
        observed.project,
        coalesce(
            chains.id,
            trim(regexp_replace(lower(observed.chain_label), '[^a-z0-9]+', '-', 'g'), '-')
        ) as chain_id,
        observed.chain_label,
        observed.symbol,
        observed.tvl_usd,
        observed.apy,
        observed.apy_base,
        observed.apy_reward,
        observed.apy_pct_1d,
        observed.apy_pct_7d,
        observed.apy_pct_30d,
        observed.is_stablecoin,
        observed.il_risk,
        observed.exposure,
        observed.pool_meta,
        observed.outlier,
        observed.underlying_tokens_json,
        observed.reward_tokens_json,
        observed.volume_usd_1d,
        observed.volume_usd_7d
    from observed
    left join chains on chains.name_key = lower(observed.chain_label)
)

select * from final
