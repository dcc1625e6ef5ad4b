-- /api/stablecoin/{id} rows: every registry coin with its daily supply history (coins without history get none).
select c.id as stablecoin_id, h.date, h.peg_type, h.circulating_native, h.circulating_usd
from registry_coins c
left join supply_history_daily h on h.stablecoin_id = c.id
order by c.id, h.date
