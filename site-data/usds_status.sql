-- Row of site-data/usds-status.json (empty without a USDS status capture).
select
    stablecoin_id, token, evm_chain_id, freeze_module_active, implementation_address, known_no_freeze_implementation,
    probe_outcome, probe_result, probe_reason, total_supply_raw::varchar as total_supply_raw,
    block_number, block_hash, block_timestamp, observed_at, capture_path
from usds_status
order by token
