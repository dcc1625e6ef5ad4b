-- assert: primary key unique and not null
select id, count(*) from tape_events group by id having count(*) > 1 or id is null;
-- assert: class and severity vocabularies
select id from tape_events
where class not in ('depeg', 'freeze', 'score') or severity not in ('info', 'warning', 'critical');
-- assert: a freeze event names its chain, a depeg event its depeg event id
select id from tape_events where (class = 'freeze' and chain is null) or (class = 'depeg' and depeg_event_id is null);
