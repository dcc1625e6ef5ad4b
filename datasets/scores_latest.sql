-- Dataset scores-latest: one row per listed coin with its latest scores, largest USD supply first.
-- pegScore (ballast-peg-score-v3), safety score and grade (ballast-safety-score-v2), DEWS score and band
-- of the newest DEWS day, the one ending at as-of (ballast-dews-v1; null when the coin has no DEWS row that day), liquidityScore (null
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

-- DEWS of the newest day (the day ending at as-of; dews_daily holds nothing after as-of)
dews as (
    select * from dews_daily where date = (select max(date) from dews_daily)
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
