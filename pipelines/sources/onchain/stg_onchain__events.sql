-- Decoded on-chain events (recorded logs and the live ledger) known at as-of: block time at or
-- before as-of. One row per id: a live row wins over a recorded one, then the newest capture.
-- Raw amounts stay exact integers (hugeint); null when the event carries none and no read resolved it.
-- grain: one row per id. pk: (id)
with source as (
    select * from raw_onchain_events
),

context as (
    select * from build_context
),

known as (
    select source.*
    from source
    cross join context
    where source.ts <= context.as_of
),

final as (
    select
        id,
        chain_id,
        stablecoin_id,
        config_key,
        contract_address,
        family,
        event_name,
        event_signature,
        topic0,
        kind,
        address,
        cast(amount_raw as hugeint) as amount_raw,
        decimals,
        amount_source,
        amount_status,
        tx_hash,
        tx_from,
        block_number,
        block_hash,
        log_index,
        ts,
        origin,
        block_number * 100000 + log_index as log_position
    from known
    qualify row_number() over (partition by id order by case origin when 'live' then 0 else 1 end, _observed_at desc) = 1
)

select * from final
