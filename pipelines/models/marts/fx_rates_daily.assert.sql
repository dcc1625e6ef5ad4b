-- assert: primary key unique and not null
select date, currency, count(*) from fx_rates_daily group by date, currency
having count(*) > 1 or date is null or currency is null;
-- assert: rates are positive and finite
select date, currency from fx_rates_daily where not (usd_per_unit > 0) or isinf(usd_per_unit);
-- assert: no rate dated after as-of
select date from fx_rates_daily, build_context where date > as_of_day;
