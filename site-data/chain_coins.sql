-- /api/chains?chain= per-chain coin rows.
select s.*, c.symbol, c.name, c.peg_type
from stablecoin_chain_supply s
inner join stablecoins c using (stablecoin_id)
order by s.chain_id, s.circulating_usd desc nulls last, s.stablecoin_id
