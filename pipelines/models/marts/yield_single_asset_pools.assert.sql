-- assert: primary key unique and not null
select pool_id, count(*) from yield_single_asset_pools group by pool_id having count(*) > 1 or pool_id is null;
-- assert: every pool is matched to a registry coin
select p.pool_id from yield_single_asset_pools p left join registry_coins c on c.id = p.stablecoin_id where c.id is null;
