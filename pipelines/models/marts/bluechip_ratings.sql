-- Bluechip ratings joined to registry stablecoin ids. Candidates are the reviewed registry coins
-- (pipelines/registry/registry.json, dead ones included) with the rating's symbol (case-insensitive):
-- one candidate → matched; several → the one whose name equals the rating's name (letters and digits,
-- case-insensitive), else unmatched `ambiguous-symbol`; none → unmatched `unknown-symbol`. Two ratings
-- resolving to one coin are both unmatched `duplicate-stablecoin`. Nothing is guessed: an unmatched row
-- keeps its reason and the candidate ids it was not resolved between. Empty without a capture.
-- grain: one row per slug. pk: (slug)
with ratings as (
    select * from stg_bluechip__ratings
),

coins as (
    select
        id,
        upper(trim(symbol)) as symbol,
        lower(regexp_replace(name, '[^A-Za-z0-9]', '', 'g')) as name_key
    from registry_coins
    where not unreviewed
),

candidates as (
    select
        r.slug,
        c.id,
        c.name_key = lower(regexp_replace(coalesce(r.name, ''), '[^A-Za-z0-9]', '', 'g')) as name_agrees
    from ratings as r
    inner join coins as c on c.symbol = r.symbol
),

per_slug as (
    select
        slug,
        count(*) as symbol_matches,
        count(*) filter (where name_agrees) as name_matches,
        min(id) as first_id,
        min(id) filter (where name_agrees) as name_id,
        string_agg(id, ',' order by id) as candidate_ids
    from candidates
    group by slug
),

resolved as (
    select
        r.*,
        p.candidate_ids,
        case
            when p.symbol_matches = 1 then p.first_id
            when p.name_matches = 1 then p.name_id
        end as matched_id,
        case
            when p.symbol_matches is null then 'unknown-symbol'
            when p.symbol_matches = 1 or p.name_matches = 1 then null
            else 'ambiguous-symbol'
        end as match_reason
    from ratings as r
    left join per_slug as p on p.slug = r.slug
),

counted as (
    select
        *,
        count(matched_id) over (partition by matched_id) as ratings_for_coin
    from resolved
),

final as (
    select
        slug,
        case when ratings_for_coin > 1 then null else matched_id end as stablecoin_id,
        name,
        symbol,
        grade,
        score,
        report_date,
        last_change_date,
        url,
        observed_at,
        case when ratings_for_coin > 1 then 'duplicate-stablecoin' else match_reason end as unmatched_reason,
        candidate_ids
    from counted
)

select * from final
order by slug
