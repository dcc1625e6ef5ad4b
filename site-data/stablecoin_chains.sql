-- Per-chain breakdown rows for /api/stablecoins chainCirculating.
select * from stablecoin_chain_supply order by stablecoin_id, circulating_usd desc nulls last, chain_name
