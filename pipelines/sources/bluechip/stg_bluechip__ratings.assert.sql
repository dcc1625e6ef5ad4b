-- assert: primary key (slug) unique and not null (the model's declared grain)
select slug, count(*) from stg_bluechip__ratings group by slug having count(*) > 1 or slug is null;
