-- assert: event ids are unique
select id from mint_burn_events group by id having count(*) > 1;
-- assert: amounts are never negative
select id from mint_burn_events where amount_raw < 0;
-- assert: a round trip is always a pair
select id from mint_burn_events where flow_type in ('atomic_roundtrip', 'fast_roundtrip') and roundtrip_pair_id is null
