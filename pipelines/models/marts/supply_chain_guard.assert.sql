-- assert: primary key unique and not null
select stablecoin_id, count(*) from supply_chain_guard group by stablecoin_id having count(*) > 1 or stablecoin_id is null;
-- assert: a quarantined coin's chains sum to more than its total beyond the rounding allowance (1% + $1)
select stablecoin_id from supply_chain_guard where not (chain_total_usd > total_usd * 1.01 + 1) or chain_count < 1;
-- assert: a quarantined coin has no row in the chain tables
select g.stablecoin_id from supply_chain_guard g inner join stablecoin_chain_supply s using (stablecoin_id);
