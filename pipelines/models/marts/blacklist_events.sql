-- Freeze/blacklist ledger (spec 2.5): blacklist, unblacklist and destroy events of tracked freeze
-- contracts, valued at event time by the supply valuation rule of the event's UTC day
-- (int_onchain_events_valued: USD pegs 1 x units; null, never zero, when unavailable; USD per token
-- unit in price_usd_at_event, its basis in valuation_basis). Every destroy is linked to the latest
-- freeze of the same contract and address before it (`linked_freeze_event_id`, `frozen_duration_sec`).
-- grain: one row per id. pk: (id)
with events as (
    select * from int_onchain_events_valued
    where kind in ('blacklist', 'unblacklist', 'destroy')
),

coins as (
    select * from registry_coins
),

chains as (
    select * from registry_chains
),

freezes as (
    select id, chain_id, contract_address, address, ts, log_position
    from events
    where kind = 'blacklist'
),

links as (
    select
        destroys.id,
        freezes.id as linked_freeze_event_id,
        destroys.ts - freezes.ts as frozen_duration_sec
    from events as destroys
    asof inner join freezes
        on freezes.chain_id = destroys.chain_id
        and freezes.contract_address = destroys.contract_address
        and freezes.address = destroys.address
        and freezes.log_position <= destroys.log_position
    where destroys.kind = 'destroy'
),

final as (
    select
        events.id,
        events.stablecoin_id,
        upper(coins.symbol) as symbol,
        events.chain_id,
        coalesce(chains.name, events.chain_id) as chain_name,
        events.kind as event_type,
        events.address,
        events.amount_raw,
        events.decimals,
        events.amount_decimal,
        events.amount_native,
        events.amount_usd_at_event,
        events.price_usd_at_event,
        events.valuation_basis,
        events.amount_source,
        events.amount_status,
        events.tx_hash,
        events.block_number,
        events.log_index,
        events.log_position,
        events.ts,
        events.contract_address,
        events.config_key,
        events.event_signature,
        events.topic0,
        events.origin,
        links.linked_freeze_event_id,
        links.frozen_duration_sec,
        'ballast-freeze-v2' as methodology_version
    from events
    inner join coins on coins.id = events.stablecoin_id
    left join chains on chains.id = events.chain_id
    left join links on links.id = events.id
)

select * from final
