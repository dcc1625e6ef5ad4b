-- assert: primary key unique and not null
select stablecoin_id from redemption_backstops group by stablecoin_id having count(*) > 1 or stablecoin_id is null;
-- assert: route and effective exit scores from 0 to 100 (null when not scored)
select stablecoin_id from redemption_backstops
where score not between 0 and 100 or effective_exit_score not between 0 and 100;
-- assert: immediate capacity non-negative, its ratio a share of supply 0-1 (as the wire schema)
select stablecoin_id from redemption_backstops
where immediate_capacity_usd < 0 or immediate_capacity_ratio not between 0 and 1;
-- assert: every row names its methodology version
select stablecoin_id from redemption_backstops where methodology_version is null;
