-- Row of site-data/mint-burn-events.json, wire names: every mint/burn of the mint_burn_events mart, newest
-- first (timestamp desc, then id desc), and the registry's coin ids. Amounts: token units (amountNative,
-- the mart's exact decimal as the nearest double), base units as text, USD; times Unix s. explorerTxUrl
-- is left null here and filled by the artifact (the explorer table is pipelines/onchain/explorers.ts).
select
    (
        select coalesce(list({
            id: id,
            stablecoin: symbol,
            stablecoinId: stablecoin_id,
            chainId: chain_id,
            direction: direction,
            flowType: flow_type,
            burnType: burn_type,
            scope: scope,
            address: address,
            amountNative: amount_native,
            amountRaw: amount_raw::varchar,
            decimals: decimals::double,
            amountUsd: amount_usd_at_event,
            priceUsd: price_usd_at_event,
            valuationBasis: valuation_basis,
            txHash: tx_hash,
            txFrom: tx_from,
            blockNumber: block_number::double,
            logIndex: log_index::double,
            'timestamp': ts::double,
            contractAddress: contract_address,
            configKey: config_key,
            eventSignature: event_signature,
            roundtripPairId: roundtrip_pair_id,
            explorerTxUrl: null::varchar,
            methodologyVersion: methodology_version,
            origin: origin
        } order by ts desc, id desc), [])
        from mint_burn_events
    ) as events,
    (select coalesce(list(id order by id), []) from registry_coins) as stablecoinIds
