-- assert: primary key unique and not null
select source, gecko_id, date, count(*) from price_history_daily group by source, gecko_id, date
having count(*) > 1 or source is null or gecko_id is null or date is null;
-- assert: prices positive and finite
select source, gecko_id, date from price_history_daily where not (price_usd > 0) or isinf(price_usd);
-- assert: no price dated after as-of
select source, gecko_id, date from price_history_daily, build_context where date > as_of_day;
