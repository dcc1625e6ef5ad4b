-- On-chain totalSupply() samples; raw amounts stay integers (hugeint).
-- grain: one row per chain_id, contract_address, block_number.
with source as (
    select * from raw_onchain__total_supply_samples
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
    from source
    qualify row_number() over (partition by chain_id, contract_address, block_number order by _observed_at desc) = 1
)

select * from final
