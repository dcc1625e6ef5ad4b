-- assert: primary key (llama_id) unique and not null (the model's declared grain)
select llama_id, count(*) from stg_defillama__assets group by llama_id having count(*) > 1 or llama_id is null;
