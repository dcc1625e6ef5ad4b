-- On-chain totalSupply() samples; raw amounts stay integers (hugeint).
-- No look-ahead: a sample counts from its block time (`observed_at`, Unix s), so a build as of T keeps
-- samples with observed_at <= T (the loader's filter tests the UTC day only: samples later on the
-- as-of day would pass it).
-- grain: one row per chain_id, contract_address, block_number. pk: (chain_id, contract_address, block_number)
with source as (
    select * from raw_onchain__total_supply_samples
),

context as (
    select as_of from build_context
),

observed as (
    select source.*
    from source
    cross join context
    where source.observed_at <= context.as_of
),

final as (
    select
        chain_id,
        contract_address,
        symbol,
        block_number,
        cast(date as date) as date,
        observed_at,
        supply_raw,
        decimals,
        cast(supply_raw as double) / pow(10, decimals) as supply_native
    from observed
    qualify row_number() over (partition by chain_id, contract_address, block_number order by _observed_at desc) = 1
)

select * from final
