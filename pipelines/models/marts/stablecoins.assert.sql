-- assert: primary key unique and not null
select stablecoin_id, count(*) from stablecoins group by stablecoin_id having count(*) > 1 or stablecoin_id is null;
-- assert: supply non-negative
select * from stablecoins where circulating_usd < 0 or prev_day_usd < 0 or prev_week_usd < 0 or prev_month_usd < 0;
-- assert: every listed coin maps to a registry coin (the build adds unreviewed records for unknown ones)
select a.llama_id from stg_defillama__assets a left join registry_coins c on c.llama_id = a.llama_id where c.id is null;
-- assert: no supply point dated after as-of
select * from stablecoins, build_context where supply_date > as_of_day;
-- assert: the current supply is the supply history's point of that day
select s.stablecoin_id from stablecoins s inner join supply_history_daily h on h.stablecoin_id = s.stablecoin_id and h.date = s.supply_date
where h.circulating_usd is distinct from s.circulating_usd;
