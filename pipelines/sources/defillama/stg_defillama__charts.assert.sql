-- assert: primary key (chart, date, peg_type) unique and not null (the model's declared grain)
select chart, date, peg_type, count(*) from stg_defillama__charts group by chart, date, peg_type having count(*) > 1 or chart is null or date is null or peg_type is null;
