-- assert: primary key unique
select date, peg_type, count(*) from total_supply_daily group by all having count(*) > 1;
