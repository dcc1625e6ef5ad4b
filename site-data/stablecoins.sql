-- /api/stablecoins rows: listed coins, largest supply first.
select * from stablecoins order by circulating_usd desc nulls last, stablecoin_id
