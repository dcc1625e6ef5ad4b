-- /api/chains aggregate rows, largest first.
select * from chain_supply order by circulating_usd desc nulls last, chain_id
