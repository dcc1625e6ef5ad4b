-- assert: primary key (source, gecko_id, quote, ts) unique and not null (the model's declared grain)
select source, gecko_id, quote, ts, count(*) from stg_prices__bars group by source, gecko_id, quote, ts having count(*) > 1 or source is null or gecko_id is null or quote is null or ts is null;
