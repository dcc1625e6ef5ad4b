-- Reserve compositions per registry coin: the curated fallback (registry reserves_json) and the
-- newest live reading's components (stg_reserves__compositions), for coins with either.
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
        c.reserves_json,
        l.adapter,
        l.reported_at,
        l.observed_at,
        l.max_age_sec,
        l.total_usd,
        l.components_json
    from coins c
    left join live l on l.stablecoin_id = c.id
    where c.reserves_json is not null or l.stablecoin_id is not null
    order by c.id
)

select * from final
