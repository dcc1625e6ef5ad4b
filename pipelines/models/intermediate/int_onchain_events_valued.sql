-- On-chain events with their native amount (base units / 10^decimals: the exact `amount_decimal`
-- string and `amount_native` double) and USD value at event time by THE supply valuation rule
-- (int_supply_valuation_daily) of the event's UTC day: USD pegs 1 x units
-- (`par`), other fiat the ECB rate (`fx`, `fx-stale`), gold/NAV/floating pegs the accepted consensus
-- price (`consensus`); null (never zero) when the rule has no value that day (`unavailable`) or the
-- amount is unknown. A destroy that carries no amount takes the amount of the burn of the same
-- address in the same transaction (Paxos FrozenAddressWiped emits SupplyDecreased): `derived`.
-- grain: one row per id. pk: (id)
with events as (
    select * from stg_onchain__events
),

valuation as (
    select * from int_supply_valuation_daily
),

same_tx_burns as (
    select destroys.id, any_value(burns.amount_raw) as amount_raw
    from events as destroys
    inner join events as burns
        on burns.chain_id = destroys.chain_id
        and burns.tx_hash = destroys.tx_hash
        and burns.address = destroys.address
        and burns.kind = 'burn'
    where destroys.kind = 'destroy' and destroys.amount_raw is null and burns.amount_raw is not null
    group by destroys.id
    having count(*) = 1
),

amounts as (
    select
        events.* exclude (amount_raw, amount_source, amount_status),
        coalesce(events.amount_raw, same_tx_burns.amount_raw) as amount_raw,
        case when events.amount_raw is null and same_tx_burns.amount_raw is not null then 'derived' else events.amount_source end as amount_source,
        case when events.amount_raw is null and same_tx_burns.amount_raw is not null then 'resolved' else events.amount_status end as amount_status,
        cast(to_timestamp(events.ts) at time zone 'UTC' as date) as event_date
    from events
    left join same_tx_burns on same_tx_burns.id = events.id
),

with_decimal as (
    -- amount_decimal: the exact token amount as a decimal string (base units / 10^decimals, trailing
    -- zeros trimmed); amount_native is that string as the nearest double (never float division)
    select
        amounts.*,
        case when amounts.amount_raw is null then null
            when rtrim(lpad((amounts.amount_raw % pow(10, amounts.decimals)::hugeint)::varchar, amounts.decimals::integer, '0'), '0') = ''
                then (amounts.amount_raw // pow(10, amounts.decimals)::hugeint)::varchar
            else (amounts.amount_raw // pow(10, amounts.decimals)::hugeint)::varchar || '.'
                || rtrim(lpad((amounts.amount_raw % pow(10, amounts.decimals)::hugeint)::varchar, amounts.decimals::integer, '0'), '0')
        end as amount_decimal
    from amounts
),

final as (
    select
        with_decimal.*,
        cast(with_decimal.amount_decimal as double) as amount_native,
        valuation.usd_per_native as price_usd_at_event,
        coalesce(valuation.valuation_basis, 'unavailable') as valuation_basis,
        cast(with_decimal.amount_decimal as double) * valuation.usd_per_native as amount_usd_at_event
    from with_decimal
    left join valuation
        on valuation.stablecoin_id = with_decimal.stablecoin_id
        and valuation.date = with_decimal.event_date
)

select * from final
