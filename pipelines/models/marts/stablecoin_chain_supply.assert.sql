-- assert: primary key unique
select stablecoin_id, chain_id, count(*) from stablecoin_chain_supply group by all having count(*) > 1;
-- assert: chain sum never exceeds the coin total by more than 1% (upstream rounding)
select s.stablecoin_id from stablecoins s inner join (select stablecoin_id, sum(circulating_usd) as total from stablecoin_chain_supply group by all) c using (stablecoin_id) where c.total > s.circulating_usd * 1.01 + 1;
