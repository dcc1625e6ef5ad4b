-- Public depeg incidents (spec 2.6), one row per linked incident, served by /api/depeg-events.
-- grain: one row per id. pk: (id)
with incidents as (
    select * from depeg_incidents
),

final as (
    select
        id,
        stablecoin_id,
        symbol,
        peg_type,
        direction,
        peak_deviation_bps,
        started_at,
        ended_at,
        start_price,
        peak_price,
        recovery_price,
        peg_reference,
        source,
        confirmation_sources,
        pending_reason,
        close_reason,
        constituent_event_count,
        provenance_json,
        trace_json,
        -- independent source families whose quotes showed the condition, '+'-joined
        source_families
    from incidents
)

select * from final
