-- assert: primary key unique and not null
select stablecoin_id, hour_ts, count(*) from mint_burn_hourly group by stablecoin_id, hour_ts
having count(*) > 1 or stablecoin_id is null or hour_ts is null;
-- assert: hour_ts is the start of a UTC hour
select stablecoin_id, hour_ts from mint_burn_hourly where hour_ts % 3600 <> 0;
-- assert: amounts and counts non-negative, unpriced counts within the counts
select stablecoin_id, hour_ts from mint_burn_hourly
where minted_native < 0 or burned_native < 0 or minted_usd < 0 or burned_usd < 0 or mint_count < 0 or burn_count < 0
   or unpriced_mint_count not between 0 and mint_count or unpriced_burn_count not between 0 and burn_count
   or atomic_roundtrip_count < 0 or fast_roundtrip_count < 0 or bridge_transfer_count < 0 or frozen_funds_count < 0;
-- assert: no hour after as-of
select stablecoin_id, hour_ts from mint_burn_hourly, build_context where hour_ts > as_of;
