-- /api/supply-history/{id}: each coin's daily supply (one file per stablecoinId), oldest first.
select
  stablecoin_id as stablecoinId,
  epoch(date)::integer as date,
  circulating_usd as circulatingUsd,
  circulating_native as circulatingNative,
  source
from supply_history_daily
order by stablecoin_id, supply_history_daily.date
