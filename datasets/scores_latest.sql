-- Dataset scores-latest: one row per listed coin with its latest scores, largest USD supply first.
-- pegScore (ballast-peg-score-v2), safety score and grade (ballast-safety-score-v1), DEWS score and band
-- of the as-of day (ballast-dews-v1; null when the coin has no DEWS row that day), liquidityScore (null
-- until DEX liquidity is published), coverageClass (full, limited-peg-history, unrated, defunct).
with coins as (
    select * from stablecoins
),

cards as (
    select * from report_cards
),

pegs as (
    select * from peg_scores
),

dews as (
    select * from dews_daily where date = (select as_of_day from build_context)
),

final as (
    select
        coins.stablecoin_id as "stablecoinId",
        coins.symbol,
        pegs.peg_score::integer as "pegScore",
        cards.safety_score::integer as "safetyScore",
        cards.safety_grade as "safetyGrade",
        dews.score::integer as "dewsScore",
        dews.band as "dewsBand",
        null::integer as "liquidityScore",
        cards.coverage_class as "coverageClass",
        coins.circulating_usd
    from coins
    inner join cards on cards.stablecoin_id = coins.stablecoin_id
    left join pegs on pegs.stablecoin_id = coins.stablecoin_id
    left join dews on dews.stablecoin_id = coins.stablecoin_id
)

select * exclude (circulating_usd) from final
order by circulating_usd desc nulls last, "stablecoinId"
