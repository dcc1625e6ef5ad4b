-- /api/peg-summary coin rows: every listed coin, best peg score first; ties: more priced days first (longer evidence).
select * from peg_scores order by peg_score desc nulls last, priced_days desc, stablecoin_id
