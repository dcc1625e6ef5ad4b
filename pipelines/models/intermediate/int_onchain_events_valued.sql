-- On-chain events with their native amount (base units / 10^decimals) and USD value at event time:
-- the coin's price on the event's UTC day, else the latest within the 3 days before; null (never
-- zero) when no price exists. A destroy that carries no amount takes the amount of the burn of the
-- same address in the same transaction (Paxos FrozenAddressWiped emits SupplyDecreased): `derived`.
-- grain: one row per id. pk: (id)
with events as (
    select * from stg_onchain__events
),

prices as (
    select * from int_coin_prices_daily
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

priced as (
    select
        amounts.id,
        prices.price_usd
    from amounts
    inner join prices
        on prices.stablecoin_id = amounts.stablecoin_id
        and prices.date between amounts.event_date - 3 and amounts.event_date
    qualify row_number() over (partition by amounts.id order by prices.date desc) = 1
),

final as (
    select
        amounts.*,
        cast(amounts.amount_raw as double) / pow(10, amounts.decimals) as amount_native,
        priced.price_usd as price_usd_at_event,
        cast(amounts.amount_raw as double) / pow(10, amounts.decimals) * priced.price_usd as amount_usd_at_event
    from amounts
    left join priced on priced.id = amounts.id
)

select * from final
