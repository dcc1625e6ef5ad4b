-- Sky USDS status (source pipelines/sources/usds-status.ts): the freeze module is active when the
-- implementation behind the ERC-1967 proxy answers `isBlocked(address)` (the probe returned a value);
-- a revert or an empty answer means no freeze function. `known_no_freeze_implementation`: the
-- implementation is the one recorded without a freeze function. Empty without a capture.
-- grain: at most one row. pk: (token)
with status as (
    select * from stg_usds__status
),

final as (
    select
        'usds-sky' as stablecoin_id,
        token,
        evm_chain_id,
        probe_outcome = 'answered' as freeze_module_active,
        implementation_address,
        implementation_address = '0x1923dfee706a8e78157416c29cbccfde7cdf4102' as known_no_freeze_implementation,
        probe_outcome,
        probe_result,
        probe_reason,
        total_supply_raw,
        block_number,
        block_hash,
        block_timestamp,
        observed_at,
        capture_path
    from status
)

select * from final
