-- assert: primary key unique and not null
select stablecoin_id, date, count(*) from mint_burn_daily group by stablecoin_id, date
having count(*) > 1 or stablecoin_id is null or date is null;
-- assert: amounts and counts non-negative, unpriced counts within the counts
select stablecoin_id, date from mint_burn_daily
where minted_native < 0 or burned_native < 0 or minted_usd < 0 or burned_usd < 0 or mint_count < 0 or burn_count < 0
   or unpriced_mint_count not between 0 and mint_count or unpriced_burn_count not between 0 and burn_count;
-- assert: every day sums its hours (one UTC day = the hours starting in it)
select d.stablecoin_id, d.date from mint_burn_daily d
left join (
  select stablecoin_id, cast(to_timestamp(hour_ts) at time zone 'UTC' as date) as date,
         sum(mint_count) as mint_count, sum(burn_count) as burn_count
  from mint_burn_hourly group by all
) h using (stablecoin_id, date)
where h.mint_count is distinct from d.mint_count or h.burn_count is distinct from d.burn_count;
