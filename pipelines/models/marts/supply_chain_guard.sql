-- Supply-chain guard (`ballast-supply-chain-guard-v1`, changelog supply-chain-guard.md): a coin whose
-- per-chain supply sums to more than its total (beyond 1% + $1 of upstream rounding) has lost part of
-- its total or gained phantom chain supply upstream; which side is wrong cannot be told from the
-- snapshot, so the coin is quarantined: its total stays the upstream figure, its chain rows are
-- withheld from every chain table (stablecoin_chain_supply, chain_supply, chain_health) and listed
-- here with their values, and /api/stablecoins carries `supplyChainGuard` (status `quarantined`,
-- every chain resolution `unavailable`). The rest of the build publishes.
-- grain: one row per quarantined stablecoin_id. pk: (stablecoin_id)
with coins as (
    select * from int_coins_supply_current
),

chain_rows as (
    select * from int_chain_supply_usd where rejection_reason is null
),

registry_chain_ids as (
    select id as chain_id from registry_chains
),

chain_totals as (
    select stablecoin_id, sum(circulating_usd order by chain_id) as chain_total_usd, count(*)::integer as chain_count
    from chain_rows
    group by stablecoin_id
),

flagged as (
    select
        coins.stablecoin_id,
        coins.circulating_usd as total_usd,
        chain_totals.chain_total_usd,
        chain_totals.chain_count,
        -- the snapshot the totals come from: the list capture, else the supply point's day (00:00 UTC)
        coalesce(coins.list_observed_at, epoch(coins.supply_date::timestamp)::bigint) as observed_at
    from coins
    inner join chain_totals using (stablecoin_id)
    where chain_totals.chain_total_usd > coalesce(coins.circulating_usd, 0) * 1.01 + 1
),

chains as (
    select
        flagged.stablecoin_id,
        to_json(list({
            'chainLabel': chain_rows.chain_name,
            'chainId': registry_chain_ids.chain_id,
            'listCurrentUsd': chain_rows.circulating_usd,
            'baselineUsd': chain_rows.prev_day_usd,
            'baselineObservedAt': flagged.observed_at - 86400,
            'baselineSource': 'list-prev-day',
            'resolution': 'unavailable',
            'observedAt': flagged.observed_at,
            'observedAtKind': 'upstream'
        } order by chain_rows.chain_name))::varchar as chains_json
    from flagged
    inner join chain_rows using (stablecoin_id)
    left join registry_chain_ids on registry_chain_ids.chain_id = chain_rows.chain_id
    group by flagged.stablecoin_id
),

final as (
    select
        flagged.stablecoin_id,
        'supply-chain-dropout' as reason,
        'quarantined' as status,
        flagged.observed_at as quarantined_since,
        flagged.total_usd,
        flagged.chain_total_usd,
        flagged.chain_count,
        chains.chains_json
    from flagged
    inner join chains using (stablecoin_id)
)

select * from final
