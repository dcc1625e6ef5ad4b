-- Daily (UTC) mint/burn aggregates per coin over standard flows, from the hourly aggregates (days
-- with a standard mint or burn; hours holding only excluded flow types are left out).
-- grain: one row per stablecoin_id, date. pk: (stablecoin_id, date)
with hourly as (
    select * from mint_burn_hourly
    where mint_count + burn_count > 0
),

final as (
    select
        stablecoin_id,
        cast(to_timestamp(hour_ts - hour_ts % 86400) at time zone 'UTC' as date) as date,
        sum(minted_native) as minted_native,
        sum(burned_native) as burned_native,
        sum(minted_usd) as minted_usd,
        sum(burned_usd) as burned_usd,
        sum(mint_count) as mint_count,
        sum(burn_count) as burn_count,
        sum(unpriced_mint_count) as unpriced_mint_count,
        sum(unpriced_burn_count) as unpriced_burn_count
    from hourly
    group by all
)

select * from final
