-- assert: primary key unique and not null
select chain_id, count(*) from chain_supply group by chain_id having count(*) > 1 or chain_id is null;
-- assert: supply and coin counts (coins holding supply there) non-negative
select chain_id from chain_supply
where circulating_usd < 0 or prev_day_usd < 0 or prev_week_usd < 0 or prev_month_usd < 0 or coin_count < 0;
-- assert: dominance share and coin HHI are fractions of 0-1 (HHI on shares, not percents)
select chain_id from chain_supply where dominance_share not between 0 and 1 or coin_hhi not between 0 and 1;
