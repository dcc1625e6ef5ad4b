-- assert: primary key unique and not null
select stablecoin_id, count(*) from stablecoins group by stablecoin_id having count(*) > 1 or stablecoin_id is null;
-- assert: supply non-negative
select * from stablecoins where circulating_usd < 0 or prev_day_usd < 0 or prev_week_usd < 0 or prev_month_usd < 0;
-- assert: every listed coin maps to a registry coin
select a.llama_id from stg_defillama__assets a left join registry_coins c on c.llama_id = a.llama_id where c.id is null;
