-- assert: primary key (token) unique and not null (the model's declared grain)
select token, count(*) from stg_usds__status group by token having count(*) > 1 or token is null;
-- assert: at most one row
select count(*) from stg_usds__status having count(*) > 1;
