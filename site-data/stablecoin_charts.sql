-- /api/stablecoin-charts rows.
select date, aggregate_universe, peg_type, circulating_usd from total_supply_daily order by date, peg_type
