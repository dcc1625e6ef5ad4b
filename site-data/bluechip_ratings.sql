-- Rows of site-data/bluechip-ratings.json: every rating of the mart, matched or not (the artifact splits them).
with ratings as (
    select * from bluechip_ratings
),

final as (
    select
        slug,
        stablecoin_id,
        name,
        symbol,
        grade,
        score,
        strftime(report_date, '%Y-%m-%d') as report_date,
        strftime(last_change_date, '%Y-%m-%d') as last_change_date,
        url,
        observed_at,
        unmatched_reason,
        candidate_ids
    from ratings
)

select * from final
order by slug
