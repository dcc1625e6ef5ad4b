-- assert: primary key (gecko_id, date) unique and not null (the model's declared grain)
select gecko_id, date, count(*) from stg_coingecko__market_chart group by gecko_id, date having count(*) > 1 or gecko_id is null or date is null;
