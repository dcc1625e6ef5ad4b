-- /api/stress-signals rows: DEWS per coin and day over the last 365 days before as-of (pipelines/analytics/stress-signals.ts).
select d.stablecoin_id, c.symbol, c.peg_type, strftime(d.date, '%Y-%m-%d') as date, d.score, d.band, d.base_score, d.psi_amplifier,
    d.contagion_amplifier, d.available_weight, d.mcap_usd, d.signals_json, d.methodology_version
from dews_daily d
inner join registry_coins c on c.id = d.stablecoin_id
where d.date > cast(to_timestamp((select as_of from build_context)) at time zone 'UTC' as date) - interval 366 day
order by d.date, d.stablecoin_id
