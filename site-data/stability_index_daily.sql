-- /api/stability-index: every daily reading, oldest first (pipelines/analytics/stability-index.ts), as history
-- rows (date: Unix s of 00:00 UTC; components 0 when absent); total_mcap_usd and contributors_json give the
-- current reading, not the history.
select
    epoch(date)::integer as date,
    score,
    band,
    methodology_version as methodologyVersion,
    {
        severity: coalesce(severity, 0),
        breadth: coalesce(breadth, 0),
        stressBreadth: coalesce(stress_breadth, 0),
        trend: coalesce(trend, 0)
    } as components,
    total_mcap_usd,
    contributors_json
from stability_index_daily
order by stability_index_daily.date
