-- Mint/burn events of tracked supply contracts, classified (methodology ballast-mint-burn-v2):
--   atomic_roundtrip: a mint and a burn of the same coin in one transaction within 0.5%;
--   fast_roundtrip:   a burn from a mint's recipient within 24 h and within 0.5% of it (an erroneous
--                     mint undone, e.g. PYUSD's 300-trillion mint of 2025-10-15 burned 111 blocks later);
--   bridge_transfer:  minted to / burned from a known bridge contract of the chain (registry_bridges);
--   frozen_funds:     a burn in the same transaction as a destroy of the same address (a wipe);
--   standard:         issuance and redemption; only these enter the flow aggregates.
-- USD: amount_native x the supply valuation rule of the event's UTC day (int_onchain_events_valued):
-- price_usd_at_event is USD per token unit, valuation_basis par/fx/fx-stale/consensus/unavailable.
-- grain: one row per id. pk: (id)
with events as (
    select * from int_onchain_events_valued
    where kind in ('mint', 'burn')
),

destroys as (
    select chain_id, tx_hash, address from stg_onchain__events where kind = 'destroy'
),

bridges as (
    select chain, lower(address) as address from registry_bridges
),

coins as (
    select * from registry_coins
),

same_tx_candidates as (
    select mints.id as mint_id, burns.id as burn_id, mints.log_position as mint_position, burns.log_position as burn_position
    from events as mints
    inner join events as burns
        on burns.chain_id = mints.chain_id
        and burns.tx_hash = mints.tx_hash
        and burns.stablecoin_id = mints.stablecoin_id
        and burns.kind = 'burn'
    where mints.kind = 'mint'
        and abs(mints.amount_raw - burns.amount_raw) <= 0.005 * greatest(mints.amount_raw, burns.amount_raw)
),

same_tx as (
    -- one to one: each mint pairs with its first matching burn of the transaction, each burn with its first mint
    select mint_id, burn_id
    from (
        select * from same_tx_candidates
        qualify row_number() over (partition by mint_id order by burn_position) = 1
    )
    qualify row_number() over (partition by burn_id order by mint_position) = 1
),

fast_candidates as (
    select mints.id as mint_id, burns.id as burn_id, burns.log_position as burn_position, mints.log_position as mint_position
    from events as mints
    inner join events as burns
        on burns.chain_id = mints.chain_id
        and burns.stablecoin_id = mints.stablecoin_id
        and burns.address = mints.address
        and burns.kind = 'burn'
        and burns.log_position > mints.log_position
        and burns.ts <= mints.ts + 86400
        and burns.tx_hash <> mints.tx_hash
    where mints.kind = 'mint'
        and abs(mints.amount_raw - burns.amount_raw) <= 0.005 * greatest(mints.amount_raw, burns.amount_raw)
),

fast as (
    -- each mint pairs with its first matching burn, each burn with its first matching mint
    select mint_id, burn_id
    from (
        select * from fast_candidates
        qualify row_number() over (partition by mint_id order by burn_position) = 1
    )
    qualify row_number() over (partition by burn_id order by mint_position) = 1
),

roundtrips as (
    select mint_id as id, burn_id as pair_id, 'atomic_roundtrip' as flow_type from same_tx
    union all
    select burn_id, mint_id, 'atomic_roundtrip' from same_tx
    union all
    select mint_id, burn_id, 'fast_roundtrip' from fast
    union all
    select burn_id, mint_id, 'fast_roundtrip' from fast
),

roundtrip_of as (
    select * from roundtrips
    qualify row_number() over (partition by id order by flow_type, pair_id) = 1
),

classified as (
    select
        events.*,
        roundtrip_of.pair_id as roundtrip_pair_id,
        case
            when roundtrip_of.flow_type is not null then roundtrip_of.flow_type
            when bridges.address is not null then 'bridge_transfer'
            when events.kind = 'burn' and destroys.tx_hash is not null then 'frozen_funds'
            else 'standard'
        end as flow_type
    from events
    left join roundtrip_of on roundtrip_of.id = events.id
    left join bridges on bridges.chain = events.chain_id and bridges.address = events.address
    left join destroys
        on destroys.chain_id = events.chain_id and destroys.tx_hash = events.tx_hash and destroys.address = events.address
),

final as (
    select
        classified.id,
        classified.stablecoin_id,
        upper(coins.symbol) as symbol,
        classified.chain_id,
        classified.kind as direction,
        classified.flow_type,
        case
            when classified.kind = 'mint' then null
            when classified.flow_type = 'standard' then 'redemption'
            when classified.flow_type = 'bridge_transfer' then 'bridge'
            when classified.flow_type = 'frozen_funds' then 'frozen_funds'
            else 'roundtrip'
        end as burn_type,
        case
            when classified.flow_type = 'standard' then 'issuance'
            when classified.flow_type = 'bridge_transfer' then 'bridge'
            when classified.flow_type = 'frozen_funds' then 'enforcement'
            else 'roundtrip'
        end as scope,
        classified.address,
        classified.amount_raw,
        classified.decimals,
        classified.amount_native,
        classified.amount_usd_at_event,
        classified.price_usd_at_event,
        classified.valuation_basis,
        classified.tx_hash,
        classified.tx_from,
        classified.block_number,
        classified.log_index,
        classified.log_position,
        classified.ts,
        classified.contract_address,
        classified.config_key,
        classified.event_signature,
        classified.origin,
        classified.roundtrip_pair_id,
        'ballast-mint-burn-v2' as methodology_version
    from classified
    inner join coins on coins.id = classified.stablecoin_id
)

select * from final
