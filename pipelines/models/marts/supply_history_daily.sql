-- Daily supply per coin: the best-priority source per day (detail > list > persisted list > market cap).
-- grain: one row per stablecoin_id, date. pk: (stablecoin_id, date)
with points as (
    select * from int_supply_history_points
),

coins as (
    select * from registry_coins
),

current_rate as (
    select stablecoin_id, usd_per_native from int_coins_supply_usd
),

fx as (
    select * from int_fx_rates_latest
),

chosen as (
    select * from points
    qualify row_number() over (partition by stablecoin_id, date order by priority, source, usd nulls last) = 1
),

final as (
    select
        chosen.stablecoin_id,
        chosen.date,
        coins.peg_type,
        -- amounts: native peg units and USD (non-USD pegs convert native at the current rate)
        chosen.native as circulating_native,
        coalesce(
            chosen.usd,
            case when coins.peg_currency = 'USD' then chosen.native
                 else chosen.native * coalesce(current_rate.usd_per_native, fx.usd_per_unit) end
        ) as circulating_usd,
        chosen.source
    from chosen
    inner join coins on coins.id = chosen.stablecoin_id
    left join current_rate on current_rate.stablecoin_id = chosen.stablecoin_id
    left join fx on fx.currency = coins.peg_currency
)

select * from final
