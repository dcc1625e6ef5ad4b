-- assert: primary key (date, base, quote) unique and not null (the model's declared grain)
select date, base, quote, count(*) from stg_frankfurter__rates group by date, base, quote having count(*) > 1 or date is null or base is null or quote is null;
