-- Candidate per-chain supply points (native peg units) with registry chain ids, before valuation:
--   priority 1 `defillama-detail`: /stablecoin/{id} daily units per chain;
--   priority 2 `defillama-list`: this build's /stablecoins chainCirculating buckets (current and
--     1/7/30-day; int_list_supply_units).
-- Chain labels the registry does not know are left out (as before).
-- grain: one row per stablecoin_id, chain_id, date, source.
with coins as (
    select * from registry_coins
),

chains as (
    select * from registry_chains
),

list_points as (
    select stablecoin_id, chain_label, date, native, 'defillama-list' as source, 2 as priority
    from int_list_supply_units
    where chain_label is not null
),

detail_points as (
    select coins.id as stablecoin_id, detail.chain_label, detail.date, sum(detail.circulating_native) as native,
        'defillama-detail' as source, 1 as priority
    from stg_defillama__detail detail
    inner join coins on coins.llama_id = detail.llama_id
    where detail.chain_label is not null
    group by all
),

unioned as (
    select * from detail_points
    union all
    select * from list_points
),

final as (
    select
        unioned.stablecoin_id,
        chains.id as chain_id,
        unioned.chain_label as chain_name,
        unioned.date,
        unioned.native,
        unioned.source,
        unioned.priority
    from unioned
    inner join chains on chains.name = unioned.chain_label
    where unioned.native is not null and unioned.native >= 0
)

select * from final
