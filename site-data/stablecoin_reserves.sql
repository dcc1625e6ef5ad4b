-- /api/stablecoin-reserves: per registry coin with either, the newest live reading's components
-- (stg_reserves__compositions; `live` null without one) and the curated fallback (registry reserves_json).
-- components_json and reserves_json are JSON documents the artifact parses.
with coins as (
    select id, reserves_json from registry_coins where not unreviewed
),

live as (
    select
        stablecoin_id,
        any_value(adapter) as adapter,
        max(reported_at) as reported_at,
        max(observed_at) as observed_at,
        max(max_age_sec) as max_age_sec,
        max(total_usd) as total_usd,
        to_json(list({'name': name, 'pct': pct, 'valueUsd': value_usd} order by pct desc, name)) as components_json
    from stg_reserves__compositions
    group by stablecoin_id
),

final as (
    select
        c.id as stablecoin_id,
        case when l.components_json is not null then {
            adapter: l.adapter,
            reportedAt: l.reported_at::double,
            observedAt: l.observed_at::double,
            maxAgeSec: l.max_age_sec::double,
            totalUsd: l.total_usd::double
        } end as live,
        l.components_json,
        c.reserves_json
    from coins c
    left join live l on l.stablecoin_id = c.id
    where c.reserves_json is not null or l.stablecoin_id is not null
    order by c.id
)

select * from final
