-- assert: primary key unique (one curated coin per contract)
select chain_id, contract_address, block_number, count(*) from chain_supply_samples group by all having count(*) > 1;
-- assert: no sample after as-of
select * from chain_supply_samples, build_context where date > as_of_day;
