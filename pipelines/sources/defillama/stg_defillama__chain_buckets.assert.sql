-- assert: primary key (llama_id, chain_label) unique and not null (the model's declared grain)
select llama_id, chain_label, count(*) from stg_defillama__chain_buckets group by llama_id, chain_label having count(*) > 1 or llama_id is null or chain_label is null;
