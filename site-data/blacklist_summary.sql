-- Inputs of site-data/blacklist-summary.json (computed by the artifact, site-data/blacklist.ts
-- blacklistSummary): every blacklist_events mart row, whole, newest first (ts desc, then id desc); the
-- tracked freeze contracts by config key; the registry chains by id.
select
    (select coalesce(list(e order by e.ts desc, e.id desc), []) from blacklist_events e) as events,
    (
        select coalesce(list({
            config_key: config_key,
            stablecoin_id: stablecoin_id,
            symbol: symbol,
            chain_id: chain_id,
            contract_address: contract_address,
            family: family,
            decimals: decimals,
            start_block: start_block,
            unsupported_reason: unsupported_reason
        } order by config_key), [])
        from registry_tracked_contracts
        where purpose = 'freeze'
    ) as coverage,
    (select coalesce(list({ id: id, name: name } order by id), []) from registry_chains) as chains
