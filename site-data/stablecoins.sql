-- /api/stablecoins rows: listed coins (mart stablecoins), largest supply first, then id; wire names in the
-- order of StablecoinData. Price fields are null without a price (`priceSource` 'missing'). Supply buckets
-- and chainCirculating (stablecoin_chain_supply: largest chain first, then name) are MAP entries keyed by
-- pegType and chain name (a bucket with a null supply is empty). Optional keys the artifact leaves out when
-- null: supplySource, unreviewed, supplyChainGuard, priceUnavailableReason (set when price is null),
-- supplyUnavailableReason (set when the current supply is null), contracts (JSON text, left out when []).
-- valuation_basis, usd_per_native and fx_rate_age_days give the payload's fallback FX rates; supply_mode
-- and supply_date the data time.
with coins as (
    select * from stablecoins
),

chains as (
    select
        stablecoin_id,
        list({
            'key': chain_name,
            'value': {
                current: circulating_usd,
                circulatingPrevDay: prev_day_usd,
                circulatingPrevWeek: prev_week_usd,
                circulatingPrevMonth: prev_month_usd
            }
        } order by circulating_usd desc nulls last, chain_name) as entries
    from stablecoin_chain_supply
    group by stablecoin_id
)

select
    c.stablecoin_id as id,
    c.name,
    c.symbol,
    c.gecko_id as geckoId,
    c.peg_type as pegType,
    c.peg_mechanism as pegMechanism,
    case when c.price is null then 'missing' else c.price_source end as priceSource,
    case when c.price is not null then c.price_confidence end as priceConfidence,
    c.price,
    case when c.price is not null then c.price_observed_at::double end as priceUpdatedAt,
    case when c.price is not null then c.price_observed_at::double end as priceObservedAt,
    case when c.price is not null then c.price_observed_at_mode end as priceObservedAtMode,
    case when c.price is not null then c.price_synced_at::double end as priceSyncedAt,
    nullif(c.supply_source, '') as supplySource,
    case when c.circulating_usd is null then [] else [{ 'key': c.peg_type, 'value': c.circulating_usd }] end as circulating,
    case when c.prev_day_usd is null then [] else [{ 'key': c.peg_type, 'value': c.prev_day_usd }] end as circulatingPrevDay,
    case when c.prev_week_usd is null then [] else [{ 'key': c.peg_type, 'value': c.prev_week_usd }] end as circulatingPrevWeek,
    case when c.prev_month_usd is null then [] else [{ 'key': c.peg_type, 'value': c.prev_month_usd }] end as circulatingPrevMonth,
    coalesce(ch.entries, []) as chainCirculating,
    from_json(coalesce(c.chains_json, '[]'), '["VARCHAR"]') as chains,
    coalesce(c.contracts_json, '[]') as contracts,
    from_json(c.consensus_sources_json, '["VARCHAR"]') as consensusSources,
    from_json(c.agree_sources_json, '["VARCHAR"]') as agreeSources,
    case when c.unreviewed then true end as unreviewed,
    case when c.supply_chain_guard_status is not null then {
        status: c.supply_chain_guard_status,
        quarantinedSince: c.supply_chain_guard_since::double,
        chains: c.supply_chain_guard_chains_json
    } end as supplyChainGuard,
    case when c.price is null then c.price_unavailable_reason end as priceUnavailableReason,
    case when c.circulating_usd is null then coalesce(c.supply_unavailable_reason, 'no-observation') end as supplyUnavailableReason,
    c.valuation_basis,
    c.usd_per_native,
    c.fx_rate_age_days::double as fx_rate_age_days,
    c.supply_mode,
    c.supply_date::varchar as supply_date
from coins c
left join chains ch on ch.stablecoin_id = c.stablecoin_id
order by c.circulating_usd desc nulls last, c.stablecoin_id
