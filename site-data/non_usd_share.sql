-- /api/non-usd-share: the days of non_usd_share_daily oldest first (`history`) and the newest (`current`, null without one).
with days as (
  select
    epoch(date)::integer as date,
    total_usd as totalUsd,
    commodity_usd as commodityUsd,
    fiat_non_usd_usd as fiatNonUsdUsd,
    commodity_share_pct as commoditySharePct,
    fiat_non_usd_share_pct as fiatNonUsdSharePct,
    floating_usd as floatingUsd,
    floating_share_pct as floatingSharePct
  from non_usd_share_daily
)
select
  (select d from days d order by d.date desc limit 1) as current,
  coalesce((select list(d order by d.date) from days d), []) as history
