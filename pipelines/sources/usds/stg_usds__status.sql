-- USDS protocol status: the newest capture at or before as-of (one row; empty without any capture).
-- grain: at most one row. pk: (token)
with source as (
    select * from raw_usds__status
),

newest as (
    select * from source
    qualify row_number() over (partition by token order by _observed_at desc, block_number desc, capture_path desc) = 1
),

final as (
    select
        lower(token) as token,
        evm_chain_id,
        block_number,
        block_hash,
        block_timestamp,
        lower(implementation_address) as implementation_address,
        probe_outcome,
        probe_result,
        probe_reason,
        total_supply_raw,
        observed_at,
        capture_path
    from newest
)

select * from final
