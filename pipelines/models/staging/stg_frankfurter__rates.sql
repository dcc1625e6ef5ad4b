-- FX reference rates (units of quote per 1 base); newest capture wins per key.
-- grain: one row per date, base, quote. pk: (date, base, quote)
with source as (
    select * from raw_frankfurter__rates
),

final as (
    select cast(date as date) as date, base, quote, rate
    from source
    qualify row_number() over (partition by date, base, quote order by _observed_at desc) = 1
)

select * from final
