-- assert: primary key (source, gecko_id, date) unique and not null (the model's declared grain)
select source, gecko_id, date, count(*) from stg_prices__daily group by source, gecko_id, date having count(*) > 1 or source is null or gecko_id is null or date is null;
