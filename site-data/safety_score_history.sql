-- /api/safety-score-history/{id}: safety score history rows per coin (one file per stablecoin_id), oldest
-- first: a row per change of grade or score (the first row per coin is the seed), with the publication it
-- came from, computed at this build's as-of.
select
    stablecoin_id,
    date::double as date,
    grade,
    score::double as score,
    prev_grade as prevGrade,
    prev_score::double as prevScore,
    methodology_version as methodologyVersion,
    {
        kind: publication_kind,
        methodologyVersion: methodology_version,
        computedAsOf: (select as_of from build_context)::double
    } as publication
from safety_score_history
order by safety_score_history.stablecoin_id, safety_score_history.date
