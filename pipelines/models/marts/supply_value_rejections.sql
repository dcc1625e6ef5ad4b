-- Supply values refused by a plausibility rule (int_supply_daily, int_chain_supply_usd): a coin's USD
-- supply above $10T (`above-10t-usd`), or above 100x its previous point (at most 7 days earlier) when that
-- point is at least $1M (`over-100x-previous-day`). Rejected values are in no published supply table
-- (history, list, summary, detail, charts, chains); the manifest counts them per reason.
-- `chain_id` is null for a coin's total, the registry chain id for a per-chain value.
-- grain: one row per stablecoin_id, date, source, chain_id.
with coin_days as (
    select stablecoin_id, date, source, null::varchar as chain_id, circulating_usd as value_usd, rejection_reason as reason
    from int_supply_daily
    where rejection_reason is not null
),

chain_days as (
    select stablecoin_id, date, source, chain_id, circulating_usd as value_usd, rejection_reason as reason
    from int_chain_supply_usd
    where rejection_reason is not null
),

final as (
    select stablecoin_id, date, source, value_usd, reason, chain_id from coin_days
    union all
    select stablecoin_id, date, source, value_usd, reason, chain_id from chain_days
)

select * from final
