-- Depeg incidents started today and yesterday (UTC days of the build's as-of).
select
    count(*) filter (where started_at >= epoch(as_of_day)) ::integer as today,
    count(*) filter (where started_at >= epoch(as_of_day) - 86400 and started_at < epoch(as_of_day))::integer as yesterday
from depeg_events cross join build_context
