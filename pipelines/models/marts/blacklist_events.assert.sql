-- assert: event ids are unique
select id from blacklist_events group by id having count(*) > 1;
-- assert: amounts are never negative
select id from blacklist_events where amount_raw < 0;
-- assert: a destroy is never linked to a later freeze
select id from blacklist_events where frozen_duration_sec < 0
