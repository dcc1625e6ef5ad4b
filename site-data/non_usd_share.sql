-- /api/non-usd-share rows, oldest first.
select * from non_usd_share_daily order by date
