-- Daily supply per coin: native units of the day's best source (level-adjusted when a lower-priority
-- source fills the day) x the supply valuation rule of that day (int_supply_valuation_daily). Points
-- failing a plausibility rule are left out (see supply_value_rejections). `source` is the source of the
-- native units; `valuation_basis` how they were valued (`par`, `fx`, `fx-stale`, `consensus`,
-- `unavailable`: USD null); `level_adjustment` the factor applied to the source's units (1 = none).
-- grain: one row per stablecoin_id, date. pk: (stablecoin_id, date)
with daily as (
    select * from int_supply_daily
),

final as (
    select
        stablecoin_id,
        date,
        peg_type,
        -- amounts: native peg units and USD
        circulating_native,
        circulating_usd,
        source,
        valuation_basis,
        usd_per_native,
        level_adjustment
    from daily
    where rejection_reason is null
)

select * from final
