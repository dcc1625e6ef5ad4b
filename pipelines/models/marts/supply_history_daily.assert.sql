-- assert: primary key unique
select stablecoin_id, date, count(*) as n from supply_history_daily group by all having count(*) > 1;
-- assert: USD supply is non-negative
select * from supply_history_daily where circulating_usd < 0;
-- assert: no point after as-of
select * from supply_history_daily, build_context where date > as_of_day;
-- assert: no implausible value is published (above $10T)
select * from supply_history_daily where circulating_usd > 1e13;
-- assert: USD is native x the valuation rule of the day
select h.* from supply_history_daily h inner join int_supply_valuation_daily v using (stablecoin_id, date)
where (h.circulating_usd is null) <> (v.usd_per_native is null)
    or abs(h.circulating_usd - h.circulating_native * v.usd_per_native) > 1e-9 * abs(h.circulating_usd);
