-- /api/peg-summary coin rows: every listed coin, best peg score first.
select * from peg_scores order by peg_score desc nulls last, stablecoin_id
