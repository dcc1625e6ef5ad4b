-- assert: primary key unique and not null
select date, count(*) from non_usd_share_daily group by date having count(*) > 1 or date is null;
-- assert: the groups partition the total (USD sums 2 dp) and shares add up to 100 (4 dp each)
select date from non_usd_share_daily
where abs(usd_peg_usd + commodity_usd + fiat_non_usd_usd + floating_usd - total_usd) > 0.05
   or abs(usd_share_pct + commodity_share_pct + fiat_non_usd_share_pct + floating_share_pct - 100) > 0.001;
-- assert: shares are percents 0-100
select date from non_usd_share_daily
where least(usd_share_pct, commodity_share_pct, fiat_non_usd_share_pct, floating_share_pct) < 0
   or greatest(usd_share_pct, commodity_share_pct, fiat_non_usd_share_pct, floating_share_pct) > 100;
