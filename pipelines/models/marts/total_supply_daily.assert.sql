-- assert: primary key unique
select date, peg_type, count(*) from total_supply_daily group by all having count(*) > 1;
-- assert: no point after as-of
select * from total_supply_daily, build_context where date > as_of_day;
