-- Hourly mint/burn aggregates per coin. Flow sums and counts cover standard flows only (issuance and
-- redemption); round trips, bridge transfers and frozen-fund burns are only counted, per flow type,
-- in the hour they happened (so a window's exclusion counts are that window's). USD sums cover priced
-- events only (the supply valuation rule of the event's day: int_onchain_events_valued); unpriced
-- events are counted so completeness can be stated. hour_ts: Unix s of the UTC hour start.
-- grain: one row per stablecoin_id, hour_ts (hours with any mint or burn). pk: (stablecoin_id, hour_ts)
with events as (
    select * from mint_burn_events
),

final as (
    select
        stablecoin_id,
        ts - ts % 3600 as hour_ts,
        coalesce(sum(amount_native) filter (where flow_type = 'standard' and direction = 'mint'), 0) as minted_native,
        coalesce(sum(amount_native) filter (where flow_type = 'standard' and direction = 'burn'), 0) as burned_native,
        sum(amount_usd_at_event) filter (where flow_type = 'standard' and direction = 'mint') as minted_usd,
        sum(amount_usd_at_event) filter (where flow_type = 'standard' and direction = 'burn') as burned_usd,
        count(*) filter (where flow_type = 'standard' and direction = 'mint') as mint_count,
        count(*) filter (where flow_type = 'standard' and direction = 'burn') as burn_count,
        count(*) filter (where flow_type = 'standard' and direction = 'mint' and amount_usd_at_event is null) as unpriced_mint_count,
        count(*) filter (where flow_type = 'standard' and direction = 'burn' and amount_usd_at_event is null) as unpriced_burn_count,
        count(*) filter (where flow_type = 'atomic_roundtrip') as atomic_roundtrip_count,
        count(*) filter (where flow_type = 'fast_roundtrip') as fast_roundtrip_count,
        count(*) filter (where flow_type = 'bridge_transfer') as bridge_transfer_count,
        count(*) filter (where flow_type = 'frozen_funds') as frozen_funds_count
    from events
    group by stablecoin_id, hour_ts
)

select * from final
