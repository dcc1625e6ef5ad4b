-- assert: primary key unique and not null (one row per chain)
select chain_id from chain_health group by chain_id having count(*) > 1 or chain_id is null;
-- assert: score and components from 0 to 100
select chain_id from chain_health
where (health_score is not null and (health_score < 0 or health_score > 100))
    or (quality is not null and (quality < 0 or quality > 100))
    or chain_environment not between 0 and 100
    or (concentration is not null and concentration not between 0 and 100)
    or peg_stability not between 0 and 100
    or backing_diversity not between 0 and 100;
-- assert: a score exactly when quality is known, its band from the score, a reason exactly when it is null
select chain_id from chain_health
where (health_score is null) <> (quality is null)
    or (health_score is null) <> (health_band is null)
    or (health_score is null) <> (health_unavailable_reason is not null)
    or health_band not in ('robust', 'healthy', 'mixed', 'fragile', 'concentrated')
