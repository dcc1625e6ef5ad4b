-- FX reference rates (units of quote per 1 base); newest capture wins per key.
-- No look-ahead: the ECB publishes the reference rates of business day D at about 16:00 Europe/Berlin
-- on D, so a rate counts from `published_at` (Unix s of D 16:00 Europe/Berlin, DST-aware) and a build
-- as of T keeps rates with published_at <= T (a build as of D 00:00Z uses D-1's rate, never D's).
-- grain: one row per date, base, quote. pk: (date, base, quote)
with source as (
    select * from raw_frankfurter__rates
),

context as (
    select as_of from build_context
),

-- publication instant per business day, computed once per date (the zone conversion is the costly part)
publication as (
    select
        date,
        cast(epoch(timezone('Europe/Berlin', date + time '16:00:00')) as bigint) as published_at
    from (select distinct cast(date as date) as date from source)
),

dated as (
    select
        cast(source.date as date) as date,
        source.base,
        source.quote,
        source.rate,
        source._observed_at,
        publication.published_at
    from source
    join publication on publication.date = cast(source.date as date)
),

final as (
    select dated.date, dated.base, dated.quote, dated.rate, dated.published_at
    from dated
    cross join context
    where dated.published_at <= context.as_of
    qualify row_number() over (partition by dated.date, dated.base, dated.quote order by dated._observed_at desc) = 1
)

select * from final
