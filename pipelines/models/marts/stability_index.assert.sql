-- assert: index scores from 0 to 100 with a band, one row per day
select date from stability_index_daily
where (score is not null and (score < 0 or score > 100 or band not in ('BEDROCK', 'STEADY', 'TREMOR', 'FRACTURE', 'CRISIS', 'MELTDOWN')))
    or (score is null and band is not null);
select date from stability_index_daily group by date having count(*) > 1
