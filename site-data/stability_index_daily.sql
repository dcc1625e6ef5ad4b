-- /api/stability-index rows: every daily reading, oldest first (pipelines/analytics/stability-index.ts).
select strftime(date, '%Y-%m-%d') as date, score, band, severity, breadth, stress_breadth, trend, total_mcap_usd, contributors_json, methodology_version
from stability_index_daily
order by date
