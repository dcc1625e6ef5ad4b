-- /api/events: the whole tape_events mart in the keyset order of the route (ts desc, then id desc in string
-- order), wire names; data carries the deviation (bps) and the depeg incident id when the event has them.
select
    id,
    type,
    class,
    ts::double as ts,
    stablecoin_id as stablecoinId,
    symbol,
    peg_currency as pegCurrency,
    chain,
    severity,
    title,
    { deviationBps: deviation_bps::double, depegEventId: depeg_event_id::double } as data
from tape_events
order by tape_events.ts desc, tape_events.id desc
