-- assert: primary key (chain_id, contract_address, block_number) unique and not null (the model's declared grain)
select chain_id, contract_address, block_number, count(*) from stg_onchain__supply_samples group by chain_id, contract_address, block_number having count(*) > 1 or chain_id is null or contract_address is null or block_number is null;
