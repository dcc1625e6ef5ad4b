-- Row of site-data/mint-burn-flows.json, wire names: per coin with a tracked supply contract (by id), its
-- hours with any mint or burn, ascending (hourTs: Unix s of the UTC hour start; sums and counts of standard
-- flows, each excluded flow type counted apart: mart mint_burn_hourly). hourly_rows (the mart's rows) and
-- newest_hour_ts (its last hour) are for the manifest and the data time, not the payload.
with hourly as (
    select * from mint_burn_hourly
),

coins as (
    select distinct t.stablecoin_id, upper(c.symbol) as symbol
    from registry_tracked_contracts t
    inner join registry_coins c on c.id = t.stablecoin_id
    where t.purpose = 'supply'
),

hours_by_coin as (
    select
        stablecoin_id,
        list({
            hourTs: hour_ts::double,
            mintedUsd: minted_usd::double,
            burnedUsd: burned_usd::double,
            mintedNative: minted_native::double,
            burnedNative: burned_native::double,
            mintCount: mint_count::double,
            burnCount: burn_count::double,
            unpricedMintCount: unpriced_mint_count::double,
            unpricedBurnCount: unpriced_burn_count::double,
            excludedEventCounts: {
                atomic_roundtrip: atomic_roundtrip_count::double,
                fast_roundtrip: fast_roundtrip_count::double,
                bridge_transfer: bridge_transfer_count::double,
                frozen_funds: frozen_funds_count::double
            }
        } order by hour_ts) as hourly
    from hourly
    group by stablecoin_id
)

select
    (
        select coalesce(list({
            stablecoinId: coins.stablecoin_id,
            symbol: coins.symbol,
            hourly: coalesce(hours_by_coin.hourly, [])
        } order by coins.stablecoin_id), [])
        from coins
        left join hours_by_coin on hours_by_coin.stablecoin_id = coins.stablecoin_id
    ) as coins,
    (select count(*)::double from hourly) as hourly_rows,
    (select max(hour_ts)::double from hourly) as newest_hour_ts
