-- THE supply valuation rule: USD value of one native unit of a coin on a UTC day. Every published USD
-- supply figure (list, per chain, detail history, charts, totals, non-USD share) is native units x this.
--   USD pegs (not NAV, not floating): 1                                              basis `par`
--   other fiat pegs: the ECB rate of the day, carried forward up to 4 days           basis `fx`
--     else the coin's accepted consensus price (as below) when observed after the
--       most recent ECB rate's day (fresher than the rate)                           basis `consensus`
--     else the same-peg consensus: the median of those fresher-than-the-rate consensus
--       prices of the day's same-peg coins, when at least 3 coins have one (EUR as of
--       2025-09-07: EURC/EURCV/EURe ~1.17, not the 121-day-old ECB rate)              basis `consensus`
--     else the most recent ECB rate before the day, if at most 365 days old          basis `fx-stale`
--     else (no ECB rate for the currency) the accepted consensus price, as below     basis `consensus`
--   gold/silver, NAV tokens, floating pegs (and `OTHER`): the coin's accepted consensus price of the day:
--     the last 15-minute consensus slot (price_consensus_slots, quality-filtered quotes only) at or
--     before the day's end and at most 7 days before it; else the first one after the day, at most
--     31 days later (so the list's 1/7/30-day buckets are valued at the coin's current price, as the
--     upstream does); never a slot after as-of                                        basis `consensus`
--   nothing usable: USD is null (the point is kept with its native units)             basis `unavailable`
-- Raw upstream prices never value supply: a quote refused by a quality rule (non-positive, above 1.19x
-- the reference, spike, stuck) is not in any consensus slot.
-- grain: one row per stablecoin_id, date (every date of a supply or chain candidate point, and every
-- UTC day with an on-chain event of the coin: mint/burn and freeze USD use this same rule). pk: (stablecoin_id, date)
with context as (
    select * from build_context
),

coins as (
    select * from registry_coins
),

peg_values as (
    select * from int_peg_values_daily
),

days as (
    select distinct stablecoin_id, date from int_supply_history_points
    union
    select distinct stablecoin_id, date from int_chain_supply_points
    union
    select distinct stablecoin_id, cast(to_timestamp(ts) at time zone 'UTC' as date) from stg_onchain__events
),

slots as (
    select slots.stablecoin_id, slots.slot_ts, slots.price
    from price_consensus_slots slots
    cross join context
    where slots.price > 0 and slots.slot_ts <= context.as_of
),

classified as (
    select
        days.stablecoin_id,
        days.date,
        epoch(days.date)::bigint + 86400 - 1 as day_end_ts,
        -- pegs without a fixed unit value (gold, silver, VAR) have no int_peg_values_daily row: consensus
        case when coins.nav_token or coins.floating_peg then 'market' else 'fixed' end as peg_class,
        coins.peg_currency,
        peg_values.usd_per_unit as fixed_usd,
        peg_values.basis as fixed_basis,
        peg_values.fx_date
    from days
    inner join coins on coins.id = days.stablecoin_id
    left join peg_values on peg_values.peg_currency = coins.peg_currency and peg_values.date = days.date
),

with_consensus as (
    select
        classified.*,
        coalesce(
            case when before.slot_ts > classified.day_end_ts - 7 * 86400 then before.price end,
            case when after.slot_ts <= classified.day_end_ts + 31 * 86400 then after.price end
        ) as consensus_usd,
        coalesce(
            case when before.slot_ts > classified.day_end_ts - 7 * 86400 then before.slot_ts end,
            case when after.slot_ts <= classified.day_end_ts + 31 * 86400 then after.slot_ts end
        ) as consensus_ts
    from classified
    asof left join slots before on before.stablecoin_id = classified.stablecoin_id and before.slot_ts <= classified.day_end_ts
    asof left join slots after on after.stablecoin_id = classified.stablecoin_id and after.slot_ts > classified.day_end_ts
),

-- same-peg consensus of a day whose ECB rate is beyond its window: the coins' consensus fresher than the rate
peg_consensus as (
    select peg_currency, date, median(consensus_usd) as usd, count(*) as contributors
    from with_consensus
    where peg_class = 'fixed' and fixed_basis = 'fx-stale' and consensus_ts > epoch(fx_date) + 86400
    group by peg_currency, date
),

with_peg_consensus as (
    select
        with_consensus.*,
        case when peg_consensus.contributors >= 3 then peg_consensus.usd end as peg_consensus_usd
    from with_consensus
    left join peg_consensus on peg_consensus.peg_currency = with_consensus.peg_currency and peg_consensus.date = with_consensus.date
),

final as (
    select
        stablecoin_id,
        date,
        case
            when peg_class = 'fixed' and fixed_basis = 'fx-stale' and consensus_ts > epoch(fx_date) + 86400 then consensus_usd
            when peg_class = 'fixed' and fixed_basis = 'fx-stale' and peg_consensus_usd is not null then peg_consensus_usd
            when peg_class = 'fixed' and fixed_usd is not null then fixed_usd
            else consensus_usd
        end as usd_per_native,
        case
            when peg_class = 'fixed' and fixed_basis = 'fx-stale' and consensus_ts > epoch(fx_date) + 86400 then 'consensus'
            when peg_class = 'fixed' and fixed_basis = 'fx-stale' and peg_consensus_usd is not null then 'consensus'
            when peg_class = 'fixed' and fixed_usd is not null then fixed_basis
            when consensus_usd is not null then 'consensus'
            else 'unavailable'
        end as valuation_basis,
        -- the ECB rate's day behind basis `fx` / `fx-stale` (null for every other basis)
        case
            when peg_class = 'fixed' and fixed_basis = 'fx-stale' and consensus_ts > epoch(fx_date) + 86400 then null
            when peg_class = 'fixed' and fixed_basis = 'fx-stale' and peg_consensus_usd is not null then null
            when peg_class = 'fixed' and fixed_usd is not null and fixed_basis in ('fx', 'fx-stale') then fx_date
        end as fx_date
    from with_peg_consensus
)

select * from final
