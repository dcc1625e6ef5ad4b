-- On-chain totalSupply() samples with the registry coin id where the contract is curated for that chain
-- (stablecoin_id null otherwise, e.g. BUSD on BSC). Native units; no USD here (samples are not valued).
-- grain: one row per chain_id, contract_address, block_number.
with samples as (
    select * from stg_onchain__supply_samples
),

contracts as (
    select distinct coins.id as stablecoin_id, lower(deployment.c.chain) as chain_id, lower(deployment.c.address) as contract_address
    from registry_coins coins,
        unnest(cast(json(coins.contracts_json) as struct(chain varchar, address varchar, decimals integer)[])) as deployment(c)
),

final as (
    select contracts.stablecoin_id, samples.*
    from samples
    left join contracts on contracts.chain_id = lower(samples.chain_id) and contracts.contract_address = lower(samples.contract_address)
)

select * from final
