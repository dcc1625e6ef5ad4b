-- assert: event ids are unique
select id from depeg_events group by id having count(*) > 1;
-- assert: peak is at least as deep as the threshold and on the event's side
select id from depeg_events
where (direction = 'below' and peak_deviation_bps > -100) or (direction = 'above' and peak_deviation_bps < 100);
-- assert: closed events end after they start and carry a close reason
select id from depeg_events where ended_at is not null and (ended_at <= started_at or close_reason is null);
-- assert: recovery price only on market-recovery closes
select id from depeg_events where recovery_price is not null and close_reason <> 'recovered-primary'
