-- assert: primary key unique and not null
select pool_id, token_index, count(*) from pool_coin_matches group by pool_id, token_index having count(*) > 1 or pool_id is null or token_index is null;
-- assert: a row is either matched or carries its reason, never both; methods and reasons in their enums
select * from pool_coin_matches
where (stablecoin_id is null) = (unmatched_reason is null)
   or match_method not in ('address', 'symbol-chain')
   or (unmatched_reason is not null and unmatched_reason not in ('ambiguous-symbol', 'unknown-symbol', 'not-on-chain', 'no-stablecoin-token'));
-- assert: every pool of yield_pools has match rows, every matched id is a registry coin
select y.pool_id from yield_pools y left join pool_coin_matches m on m.pool_id = y.pool_id where m.pool_id is null
union all
select m.stablecoin_id from pool_coin_matches m left join registry_coins c on c.id = m.stablecoin_id where m.stablecoin_id is not null and c.id is null;
