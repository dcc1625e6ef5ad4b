-- Row of site-data/stress-signals.json, wire names (pipelines/analytics/stress-signals.ts), over the DEWS
-- rows of the 365 days before as-of: the rows of the last day whose window is non-empty at as-of
-- (00:00 UTC of the UTC day of as-of − 1 s; `lastDay`) with their signals as JSON text; each coin's history
-- (MAP entries id → rows oldest first, coins in order of first appearance, then id); per day the coins
-- scored, their mean score (one decimal) and the count per band (MAP entries); every registry id with why
-- DEWS does not score it (NAV tokens, floating pegs; MAP entries, by id). Dates are Unix s of 00:00 UTC.
with ctx as (
    select
        as_of,
        ((as_of - 1) // 86400) * 86400 as last_day,
        cast(to_timestamp(as_of) at time zone 'UTC' as date) - interval 366 day as window_after
    from build_context
),

daily as (
    select d.*, epoch(d.date)::double as day, c.symbol, c.peg_type
    from dews_daily d
    inner join registry_coins c on c.id = d.stablecoin_id
    where d.date > (select window_after from ctx)
),

coin_history as (
    select
        stablecoin_id,
        min(date) as first_date,
        list({ 'date': day, score: score::double, band: band } order by date) as points
    from daily
    group by stablecoin_id
),

band_counts as (
    select day, list({ 'key': band, 'value': n::double } order by band) as bands
    from (select day, band, count(*) as n from daily group by day, band)
    group by day
),

universe as (
    select
        d.day,
        count(*)::double as coins_scored,
        round(sum(d.score)::double / count(*) * 10) / 10 as mean_score
    from daily d
    group by d.day
)

select
    (
        select coalesce(list({
            stablecoinId: d.stablecoin_id,
            symbol: d.symbol,
            pegType: d.peg_type,
            'date': d.day,
            score: d.score::double,
            band: d.band,
            baseScore: d.base_score,
            amplifiers: { psi: d.psi_amplifier, contagion: d.contagion_amplifier },
            availableWeight: d.available_weight,
            mcapUsd: d.mcap_usd,
            signals: d.signals_json,
            methodologyVersion: d.methodology_version
        } order by d.stablecoin_id), [])
        from daily d, ctx
        where d.day = ctx.last_day
    ) as coins,
    (
        select coalesce(list({ 'key': stablecoin_id, 'value': points } order by first_date, stablecoin_id), [])
        from coin_history
    ) as history,
    (
        select coalesce(list({
            'date': u.day,
            coinsScored: u.coins_scored,
            meanScore: u.mean_score,
            bands: b.bands
        } order by u.day), [])
        from universe u
        inner join band_counts b on b.day = u.day
    ) as universeHistory,
    (
        select coalesce(list({
            'key': id,
            'value': case when nav_token then 'nav-token' when floating_peg then 'floating-peg' end
        } order by id), [])
        from registry_coins
    ) as stablecoinIds
