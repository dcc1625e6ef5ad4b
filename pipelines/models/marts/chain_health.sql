-- Chain health scores (ballast-chain-health-v1; changelog pipelines/analytics/changelogs/chain-health.md),
-- one row per chain of chain_supply, over the current coins' supply on the chain (stablecoin_chain_supply,
-- positive USD only). Components 0-100, rounded to 2 dp; the score is computed from the published components:
--   health_score = round(0.30 quality + 0.20 chain_environment + 0.20 concentration + 0.20 peg_stability
--                        + 0.10 backing_diversity), null when quality is null.
-- quality: supply-weighted safety score (report_cards.safety_score) over rated supply only; null when the
--   rated share of the chain's supply is below 50% (or the chain has no supply).
-- chain_environment: curated registry chain tier (registry_chains.tier: ethereum 100, stage1-l2 66,
--   mature-alt-l1 45, established-alt-l1 20, unproven 0); 50 when the chain has no curated tier
--   (chain_environment_basis `unknown-tier`). We hold no L2BEAT snapshot.
-- concentration: round(100 x (1 - HHI)) of the coins' supply shares on the chain (one coin -> 0).
-- peg_stability: supply-weighted max(0, 100 - |current deviation bps| / 5) (peg_scores.current_deviation_bps);
--   a coin without a judged current price (no price, NAV token, floating peg) counts 50.
-- backing_diversity: Shannon entropy of fiat/RWA-backed vs crypto-backed supply, normalised by ln 2 (0 with
--   one cohort or no classified supply). Cohort from the registry's risk.backing (fiat-reserves,
--   treasury-fund, commodity, rwa-credit -> rwa; crypto-overcollateralized, delta-neutral, algorithmic ->
--   crypto); hybrid or no risk facts -> peg_mechanism (fiat-backed, commodity-backed -> rwa; crypto-backed,
--   algorithmic -> crypto); otherwise unclassified (left out of the entropy).
-- Bands: robust >= 80, healthy >= 60, mixed >= 40, fragile >= 20, concentrated < 20.
-- grain: one row per chain_id. pk: (chain_id)
with supply as (
    select stablecoin_id, chain_id, circulating_usd
    from stablecoin_chain_supply
    where circulating_usd > 0
),

chains as (
    select chain_id from chain_supply
),

registry_tiers as (
    select id as chain_id, tier from registry_chains
),

cards as (
    select stablecoin_id, safety_score from report_cards
),

peg as (
    select stablecoin_id, current_deviation_bps from peg_scores
),

coins as (
    select
        id as stablecoin_id,
        case
            when json_extract_string(risk_json, '$.backing') in ('fiat-reserves', 'treasury-fund', 'commodity', 'rwa-credit') then 'rwa'
            when json_extract_string(risk_json, '$.backing') in ('crypto-overcollateralized', 'delta-neutral', 'algorithmic') then 'crypto'
            when peg_mechanism in ('fiat-backed', 'commodity-backed') then 'rwa'
            when peg_mechanism in ('crypto-backed', 'algorithmic') then 'crypto'
        end as backing_cohort
    from registry_coins
),

per_coin as (
    select
        s.chain_id,
        s.stablecoin_id,
        s.circulating_usd,
        s.circulating_usd / sum(s.circulating_usd) over (partition by s.chain_id) as coin_share,
        c.safety_score,
        case when p.current_deviation_bps is null then 50.0 else greatest(0.0, 100.0 - abs(p.current_deviation_bps) / 5.0) end as peg_points,
        k.backing_cohort
    from supply as s
    left join cards as c using (stablecoin_id)
    left join peg as p using (stablecoin_id)
    left join coins as k using (stablecoin_id)
),

per_chain as (
    select
        chain_id,
        sum(circulating_usd order by stablecoin_id) as total_usd,
        sum(circulating_usd order by stablecoin_id) filter (where safety_score is not null) as rated_usd,
        sum(safety_score * circulating_usd order by stablecoin_id) filter (where safety_score is not null) as score_usd,
        sum(coin_share * coin_share order by stablecoin_id) as hhi,
        sum(peg_points * circulating_usd order by stablecoin_id) as peg_usd,
        sum(circulating_usd order by stablecoin_id) filter (where backing_cohort = 'rwa') as rwa_usd,
        sum(circulating_usd order by stablecoin_id) filter (where backing_cohort = 'crypto') as crypto_usd
    from per_coin
    group by chain_id
),

components as (
    select
        ch.chain_id,
        t.tier as chain_tier,
        case when t.tier is null then 'unknown-tier' else 'curated-tier' end as chain_environment_basis,
        coalesce(p.rated_usd, 0) / nullif(p.total_usd, 0) as rated_share,
        case
            when p.total_usd is null then 'no-supply'
            when coalesce(p.rated_usd, 0) / p.total_usd < 0.5 then 'rated-share-below-50pct'
        end as health_unavailable_reason,
        case
            when p.total_usd is not null and coalesce(p.rated_usd, 0) / p.total_usd >= 0.5
                then round(p.score_usd / p.rated_usd, 2)
        end as quality,
        case t.tier
            when 'ethereum' then 100.0
            when 'stage1-l2' then 66.0
            when 'mature-alt-l1' then 45.0
            when 'established-alt-l1' then 20.0
            when 'unproven' then 0.0
            else 50.0
        end as chain_environment,
        case when p.total_usd is null then null else round(100 * (1 - p.hhi))::double end as concentration,
        case when p.total_usd is null then 50.0 else round(p.peg_usd / p.total_usd, 2) end as peg_stability,
        case
            when coalesce(p.rwa_usd, 0) = 0 or coalesce(p.crypto_usd, 0) = 0 then 0.0
            else round(
                -(p.rwa_usd / (p.rwa_usd + p.crypto_usd)) * ln(p.rwa_usd / (p.rwa_usd + p.crypto_usd)) / ln(2)
                - (p.crypto_usd / (p.rwa_usd + p.crypto_usd)) * ln(p.crypto_usd / (p.rwa_usd + p.crypto_usd)) / ln(2)
                , 4) * 100
        end as backing_diversity
    from chains as ch
    left join per_chain as p using (chain_id)
    left join registry_tiers as t using (chain_id)
),

scored as (
    select
        *,
        case
            when quality is not null
                then round(0.30 * quality + 0.20 * chain_environment + 0.20 * concentration + 0.20 * peg_stability + 0.10 * backing_diversity)::integer
        end as health_score
    from components
),

final as (
    select
        chain_id,
        health_score,
        case
            when health_score is null then null
            when health_score >= 80 then 'robust'
            when health_score >= 60 then 'healthy'
            when health_score >= 40 then 'mixed'
            when health_score >= 20 then 'fragile'
            else 'concentrated'
        end as health_band,
        quality,
        chain_environment,
        concentration,
        peg_stability,
        round(backing_diversity, 2) as backing_diversity,
        rated_share,
        chain_tier,
        chain_environment_basis,
        health_unavailable_reason,
        'ballast-chain-health-v1' as methodology_version
    from scored
)

select * from final
order by chain_id
