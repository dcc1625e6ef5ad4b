-- assert: one rejection per coin, day, source and chain (chain null for a coin's total)
select stablecoin_id, date, source, chain_id, count(*) from supply_value_rejections group by all having count(*) > 1;
-- assert: a rejection names a known rule
select * from supply_value_rejections where reason not in ('above-10t-usd', 'over-100x-previous-day') or reason is null;
-- assert: a rejected total is in no published supply history
select r.stablecoin_id, r.date from supply_value_rejections r
inner join supply_history_daily h on h.stablecoin_id = r.stablecoin_id and h.date = r.date and h.circulating_usd = r.value_usd
where r.chain_id is null;
