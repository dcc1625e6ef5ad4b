-- assert: primary key (stablecoin_id, name) unique and not null (the model's declared grain)
select stablecoin_id, name, count(*) from stg_reserves__compositions group by stablecoin_id, name having count(*) > 1 or stablecoin_id is null or name is null;
