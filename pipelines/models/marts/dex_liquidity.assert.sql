-- assert: one row per coin (current) and per coin and day (history)
select stablecoin_id, count(*) from dex_liquidity group by stablecoin_id having count(*) > 1 or stablecoin_id is null
union all
select stablecoin_id, count(*) from dex_liquidity_daily group by stablecoin_id, date having count(*) > 1 or stablecoin_id is null;
-- assert: a score is 0-100 with no reason, or null with a reason from the spec 2.17 enum
select * from dex_liquidity
where (liquidity_score is null) = (unavailable_reason is null)
   or liquidity_score < 0 or liquidity_score > 100
   or unavailable_reason not in ('activity-coverage-below-floor', 'activity-missing', 'activity-stale', 'activity-completeness-unknown', 'no-retained-pools', 'invalid-coverage-evidence');
-- assert: HHI within 0-1; volumes never negative
select * from dex_liquidity where hhi < 0 or hhi > 1 or total_volume_24h_usd < 0 or total_volume_7d_usd < 0;
