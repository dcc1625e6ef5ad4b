-- /api/stablecoin-summary rows: listed coins in id order.
select * from stablecoins order by stablecoin_id
