-- assert: primary key unique
select stablecoin_id, date, count(*) from listed_supply_daily group by all having count(*) > 1;
