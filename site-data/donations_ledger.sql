-- Row of site-data/donations-ledger.json: the donations ledger at as-of, each receipt received by the cut-off
-- valued at its receipt date and classified (pipelines/registry/donations.ts). Wire names are given here.
-- Valuation: a USD-pegged coin at face value (1 USD per unit); another peg at the ECB reference rate
-- (fx_rates_daily, USD per unit) of the receipt's UTC day, or the last fixing before it (weekends,
-- holidays); no fixing at or before the day: unvalued. Classification, first match: pool | stream |
-- exchange (kinds that never count), unreviewed-contract (token not a reviewed pair), unvalued, counted.
-- Time: a build as of T keeps the ledger as known at T: receipts received at or before the cut-off
-- least(reconciliation, T), and reports that cut-off as `reconciledAt` (never a time after T).
with ctx as (
    select least(b.as_of, m.reconciled_at) as cutoff, b.as_of
    from build_context b cross join registry_donations_meta m
),

receipts as (
    select
        r.*,
        c.stablecoin_id,
        coins.symbol,
        coins.peg_currency,
        to_timestamp(r.received_at)::date as receipt_day
    from registry_donation_receipts r
    cross join ctx
    left join registry_donation_contracts c on c.chain = r.chain and c.contract_address = r.token_address
    left join registry_coins coins on coins.id = c.stablecoin_id
    where r.received_at <= ctx.cutoff
),

fixings as (
    select currency, date, usd_per_unit from fx_rates_daily
),

valued as (
    select
        receipts.*,
        case when receipts.peg_currency = 'USD' then 1.0::double else fx.usd_per_unit end as usd_per_unit,
        case when receipts.peg_currency = 'USD' or fx.date is null then null else strftime(fx.date, '%Y-%m-%d') end as fx_date
    from receipts
    asof left join fixings fx on fx.currency = receipts.peg_currency and receipts.receipt_day >= fx.date
),

classified as (
    select
        *,
        case
            when kind in ('pool', 'stream', 'exchange') then kind
            when stablecoin_id is null then 'unreviewed-contract'
            when usd_per_unit is null then 'unvalued'
            else 'counted'
        end as classification,
        round(amount::double * usd_per_unit, 6) as usd_at_receipt
    from valued
)

select
    (select cutoff::integer from ctx) as reconciledAt,
    (select as_of::integer from ctx) as asOf,
    'donor-eligibility-1.0' as methodologyVersion,
    10.0::double as thresholdUsd,
    (select rejected_receipts::integer from registry_donations_meta) as rejectedReceipts,
    coalesce((
        select list(struct_pack(stablecoinId := c.stablecoin_id, symbol := coins.symbol, chain := c.chain, contract := c.contract_address)
            order by c.stablecoin_id, c.chain)
        from registry_donation_contracts c
        join registry_coins coins on coins.id = c.stablecoin_id
    ), []) as qualifying,
    coalesce((
        select list(struct_pack(
            txHash := tx_hash, logIndex := log_index::integer, chain := chain, token := token_address, "from" := from_address,
            stablecoinId := stablecoin_id, symbol := symbol, amount := amount, receivedAt := received_at::integer, kind := kind,
            usdPerUnit := usd_per_unit, fxDate := fx_date, usdAtReceipt := usd_at_receipt, classification := classification
        ) order by received_at, tx_hash, log_index)
        from classified
    ), []) as receipts
