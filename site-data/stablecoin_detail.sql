-- /api/stablecoin/{id}: every registry coin (one file per stablecoinId) with its daily supply points,
-- oldest first; a coin without history has none (an empty list).
select
  c.id as stablecoinId,
  coalesce(
    list(
      { date: epoch(h.date)::integer, pegType: h.peg_type, usd: h.circulating_usd, native: h.circulating_native }
      order by h.date
    ) filter (where h.date is not null),
    []
  ) as points
from registry_coins c
left join supply_history_daily h on h.stablecoin_id = c.id
group by c.id
order by c.id
