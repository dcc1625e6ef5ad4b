-- depeg-history: incidents that started in the 90 days ending on the file date (the build's as-of), newest first.
select
    id::varchar as id,
    stablecoin_id as "stablecoinId",
    symbol,
    direction,
    peak_deviation_bps::integer as "peakDeviationBps",
    strftime(make_timestamp(started_at * 1000000), '%Y-%m-%dT%H:%M:%SZ') as "startedAtISO",
    case when ended_at is null then null else strftime(make_timestamp(ended_at * 1000000), '%Y-%m-%dT%H:%M:%SZ') end as "endedAtISO",
    case when ended_at is null then null else (ended_at - started_at)::integer end as "durationSec",
    start_price as "startPrice",
    peak_price as "peakPrice",
    recovery_price as "recoveryPrice",
    peg_reference as "pegReference",
    source
from depeg_events
cross join build_context
where started_at > epoch(as_of_day) + 86400 - 90 * 86400 and started_at <= as_of
order by started_at desc, id desc
