-- assert: primary key (id) unique and not null (the model's declared grain)
select id, count(*) from stg_onchain__events group by id having count(*) > 1 or id is null;
