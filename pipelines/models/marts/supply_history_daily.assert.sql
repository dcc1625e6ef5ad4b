-- assert: primary key unique
select stablecoin_id, date, count(*) as n from supply_history_daily group by all having count(*) > 1;
-- assert: USD supply is non-negative
select * from supply_history_daily where circulating_usd < 0;
-- assert: no point after as-of
select * from supply_history_daily, build_context where date > as_of_day;
