-- Hourly mint/burn aggregates per coin over standard flows (round trips, bridge transfers and
-- frozen-fund burns excluded). USD sums cover priced events only; unpriced events are counted so
-- completeness can be stated. hour_ts: Unix s of the UTC hour start.
-- grain: one row per stablecoin_id, hour_ts. pk: (stablecoin_id, hour_ts)
with events as (
    select * from mint_burn_events
    where flow_type = 'standard'
),

final as (
    select
        stablecoin_id,
        ts - ts % 3600 as hour_ts,
        sum(case when direction = 'mint' then amount_native else 0 end) as minted_native,
        sum(case when direction = 'burn' then amount_native else 0 end) as burned_native,
        sum(case when direction = 'mint' then amount_usd_at_event end) as minted_usd,
        sum(case when direction = 'burn' then amount_usd_at_event end) as burned_usd,
        count(*) filter (where direction = 'mint') as mint_count,
        count(*) filter (where direction = 'burn') as burn_count,
        count(*) filter (where direction = 'mint' and amount_usd_at_event is null) as unpriced_mint_count,
        count(*) filter (where direction = 'burn' and amount_usd_at_event is null) as unpriced_burn_count
    from events
    group by stablecoin_id, hour_ts
)

select * from final
