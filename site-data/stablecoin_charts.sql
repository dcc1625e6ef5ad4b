-- /api/stablecoin-charts: one point per day, oldest first, its USD supply per pegType (in pegType order).
select
  epoch(date)::integer as date,
  first(aggregate_universe order by peg_type) as aggregateUniverse,
  list({ pegType: peg_type, usd: circulating_usd } order by peg_type) as byPeg
from total_supply_daily
group by total_supply_daily.date
order by total_supply_daily.date
