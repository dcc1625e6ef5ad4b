-- /api/chains aggregate rows with their chain health (mart chain_health), largest first.
select s.*,
    h.health_score, h.health_band, h.quality, h.chain_environment, h.concentration, h.peg_stability, h.backing_diversity,
    h.rated_share, h.chain_tier, h.chain_environment_basis, h.health_unavailable_reason
from chain_supply s
left join chain_health h using (chain_id)
order by s.circulating_usd desc nulls last, s.chain_id
