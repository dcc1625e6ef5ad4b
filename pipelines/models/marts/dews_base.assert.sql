-- assert: primary key unique and not null (one base row per coin and day)
select stablecoin_id, date from dews_base_daily group by stablecoin_id, date
having count(*) > 1 or stablecoin_id is null or date is null;
-- assert: base scores from 0 to 100 with a band of the DEWS vocabulary; available signal weight within the declared weights (sum 1.15)
select stablecoin_id, date from dews_base_daily
where base_score < 0 or base_score > 100 or available_weight < 0 or available_weight > 1.15
    or base_band not in ('CALM', 'WATCH', 'ALERT', 'WARNING', 'DANGER');
-- assert: no day after as-of
select stablecoin_id, date from dews_base_daily, build_context where date > as_of_day;
