-- assert: DEWS scores from 0 to 100 in their band, one row per coin and day
select stablecoin_id from dews_daily
where score < 0 or score > 100
    or band <> case when score <= 15 then 'CALM' when score <= 35 then 'WATCH' when score <= 55 then 'ALERT' when score <= 75 then 'WARNING' else 'DANGER' end;
select stablecoin_id from dews_daily group by stablecoin_id, date having count(*) > 1
