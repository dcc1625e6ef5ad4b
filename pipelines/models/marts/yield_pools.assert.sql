-- assert: primary key unique and not null
select pool_id, count(*) from yield_pools group by pool_id having count(*) > 1 or pool_id is null;
-- assert: one capture only, observed at or before as-of
select count(distinct observed_at) from yield_pools having count(distinct observed_at) > 1
union all
select y.observed_at from yield_pools y cross join build_context b where y.observed_at > b.as_of;
-- assert: TVL known and non-negative; chain id present
select * from yield_pools where tvl_usd is null or tvl_usd < 0 or chain is null or chain = '';
