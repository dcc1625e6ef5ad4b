-- assert: primary key (observed_at, pool_id) unique and not null (the model's declared grain)
select observed_at, pool_id, count(*) from stg_defillama__yield_pools group by observed_at, pool_id having count(*) > 1 or observed_at is null or pool_id is null;
