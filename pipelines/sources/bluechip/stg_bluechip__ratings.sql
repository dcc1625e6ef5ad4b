-- Bluechip ratings: one row per slug from its newest capture at or before as-of (one capture per slug;
-- empty without any capture). Symbols upper-cased and trimmed for the registry join.
-- grain: one row per slug. pk: (slug)
with source as (
    select * from raw_bluechip__ratings
),

newest as (
    select * from source
    qualify row_number() over (partition by slug order by _observed_at desc, observed_at desc) = 1
),

final as (
    select
        slug,
        name,
        upper(trim(symbol)) as symbol,
        grade,
        score,
        try_cast(report_date as date) as report_date,
        try_cast(last_change_date as date) as last_change_date,
        url,
        observed_at
    from newest
)

select * from final
