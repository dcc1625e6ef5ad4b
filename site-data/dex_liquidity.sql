-- Row of site-data/dex-liquidity.json, wire names; no row when the DEX liquidity universe is empty (no pool
-- capture at or before as-of). Coins of the universe by id (newest capture day; topPools, chains and
-- protocols are JSON documents the artifact parses); the stablecoin-flagged pools' tokens that matched no
-- coin (by pool, then token index; a non-stablecoin pool's token is counted in `quality` only); quality
-- metadata of the newest capture: pool and token counts by match outcome, the unmatched tokens per reason
-- (MAP entries), the rated coins and the capture's observation (Unix s).
with scores as (
    select * from dex_liquidity
),

matches as (
    select * from pool_coin_matches
),

pools as (
    select * from yield_pools
)

select
    (
        select list({
            stablecoinId: stablecoin_id,
            symbol: symbol,
            liquidityScore: liquidity_score,
            components: case when depth_score is not null then {
                depth: depth_score,
                activity: activity_score,
                concentration: concentration_score,
                spread: spread_score,
                poolCount: pool_count_score
            } end,
            totalTvlUsd: coalesce(total_tvl_usd, 0)::double,
            poolCount: coalesce(pool_count, 0)::double,
            protocolCount: coalesce(protocol_count, 0)::double,
            chainCount: coalesce(chain_count, 0)::double,
            hhi: hhi,
            totalVolume24hUsd: total_volume_24h_usd,
            totalVolume7dUsd: total_volume_7d_usd,
            volumeCoverageShare: volume_coverage_share,
            activityStatus: activity_status,
            liquidityScoreUnavailableReason: unavailable_reason,
            warning: warning,
            topPools: top_pools_json,
            chains: chains_json,
            protocols: protocols_json,
            observedAt: observed_at::double,
            methodologyVersion: methodology_version
        } order by stablecoin_id)
        from scores
    ) as coins,
    (
        select coalesce(list({
            poolId: m.pool_id,
            tokenIndex: coalesce(m.token_index, 0)::double,
            token: m.token,
            chain: m.chain,
            project: p.project,
            symbol: p.symbol,
            tvlUsd: coalesce(p.tvl_usd, 0)::double,
            matchMethod: m.match_method,
            reason: m.unmatched_reason,
            candidates: case when coalesce(m.candidate_ids, '') = '' then [] else string_split(m.candidate_ids, ',') end
        } order by m.pool_id, m.token_index), [])
        from matches m
        inner join pools p on p.pool_id = m.pool_id
        where m.stablecoin_id is null and p.is_stablecoin
    ) as unmatched,
    {
        source: 'defillama-yields.pools',
        poolUniverse: 'DefiLlama yields /pools (AMM pools, lending markets and savings vaults holding the coin); TVL attributed per token',
        poolsTotal: (select count(*)::double from pools),
        stablecoinPools: (select count(*)::double from pools where is_stablecoin),
        poolsMatched: (select count(distinct pool_id)::double from matches where stablecoin_id is not null),
        tokensTotal: (select count(*)::double from matches),
        tokensMatched: (select count(*)::double from matches where stablecoin_id is not null),
        poolsWithAddresses: (select count(*)::double from pools where underlying_tokens_json is not null),
        poolsWithVolume: (select count(*)::double from pools where volume_usd_1d is not null),
        unmatchedByReason: (
            select coalesce(list({ 'key': unmatched_reason, 'value': n::double } order by unmatched_reason), [])
            from (select unmatched_reason, count(*) as n from matches where unmatched_reason is not null group by unmatched_reason)
        ),
        ratedCoins: (select count(*)::double from scores where liquidity_score is not null),
        observedAt: (select max(observed_at)::double from pools)
    } as quality
where exists (select 1 from scores)
