-- Pool tokens of the newest pool capture that matched no coin (site-data/dex-liquidity.json `unmatched`),
-- DefiLlama's stablecoin-flagged pools only (a non-stablecoin pool's token is counted in `quality`).
select
    m.pool_id, m.token_index, m.token, m.chain, p.project, p.symbol, p.tvl_usd, m.match_method, m.unmatched_reason, m.candidate_ids
from pool_coin_matches as m
inner join yield_pools as p on p.pool_id = m.pool_id
where m.stablecoin_id is null and p.is_stablecoin
order by m.pool_id, m.token_index
