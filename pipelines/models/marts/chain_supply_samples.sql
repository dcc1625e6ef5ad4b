-- On-chain totalSupply() samples with registry ids where the contract is curated.
-- grain: one row per chain_id, contract_address, block_number.
with samples as (
    select * from stg_onchain__supply_samples
),

final as (
    select samples.*
    from samples
)

select * from final
