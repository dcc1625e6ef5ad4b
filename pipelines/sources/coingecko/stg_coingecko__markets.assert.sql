-- assert: primary key (gecko_id) unique and not null (the model's declared grain)
select gecko_id, count(*) from stg_coingecko__markets group by gecko_id having count(*) > 1 or gecko_id is null;
