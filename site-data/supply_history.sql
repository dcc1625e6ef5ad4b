-- /api/supply-history rows.
select stablecoin_id, date, circulating_usd, circulating_native, source
from supply_history_daily
order by stablecoin_id, date
