-- Row of site-data/blacklist-events.json: every blacklist_events mart row, whole (shaped into BlacklistEvent
-- by the artifact: exact amounts, explorer links), newest first (ts desc, then id desc), and the registry
-- chains by id (`chain` ↔ `chainId`).
select
    (select coalesce(list(e order by e.ts desc, e.id desc), []) from blacklist_events e) as events,
    (select coalesce(list({ id: id, name: name } order by id), []) from registry_chains) as chains
