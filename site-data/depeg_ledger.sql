-- Row of site-data/depeg-events.json, wire names: every incident of the depeg_events mart in the keyset
-- order of /api/depeg-events (startedAt desc, then id desc), the pending incidents (firstSeenAt desc, then
-- stablecoinId) and the registry's coin ids. Times Unix s, bps signed. `provenance` is the incident's
-- provenance JSON document, parsed by the artifact.
select
    (
        select coalesce(list({
            id: id::double,
            stablecoinId: stablecoin_id,
            symbol: symbol,
            pegType: peg_type,
            direction: direction,
            peakDeviationBps: peak_deviation_bps::double,
            startedAt: started_at::double,
            endedAt: ended_at::double,
            startPrice: start_price,
            peakPrice: peak_price,
            recoveryPrice: recovery_price,
            pegReference: peg_reference,
            source: source,
            confirmationSources: confirmation_sources,
            pendingReason: pending_reason,
            closeReason: close_reason,
            constituentEventCount: constituent_event_count::double,
            provenance: provenance_json
        } order by started_at desc, id desc), [])
        from depeg_events
    ) as events,
    (
        select coalesce(list({
            stablecoinId: stablecoin_id,
            symbol: symbol,
            direction: direction,
            firstSeenAt: first_seen_at::double,
            lastSeenAt: last_seen_at::double,
            firstSeenBps: first_seen_bps::double,
            lastSeenBps: last_seen_bps::double,
            peakSeenBps: peak_seen_bps::double,
            reason: reason,
            ageSec: age_sec::double,
            expiresAt: expires_at::double,
            availableConfirmationCategories: from_json(available_categories_json, '["VARCHAR"]'),
            missingConfirmationCategories: from_json(missing_categories_json, '["VARCHAR"]')
        } order by first_seen_at desc, stablecoin_id), [])
        from depeg_pending
    ) as pending,
    (select coalesce(list(id order by id), []) from registry_coins) as stablecoinIds
