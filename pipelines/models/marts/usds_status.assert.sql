-- assert: at most one status row
select count(*) from usds_status having count(*) > 1;
-- assert: primary key unique and not null
select token from usds_status group by token having count(*) > 1 or token is null;
-- assert: the read block is not after the capture's observation, and a probe answer carries its value
select token from usds_status where block_timestamp > observed_at or ((probe_outcome = 'answered') <> (probe_result is not null))
