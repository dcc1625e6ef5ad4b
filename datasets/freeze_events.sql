-- freeze-events: the whole freeze/blacklist ledger as of the file date, newest first. Amounts are
-- exact decimal strings (base units / 10^decimals, no float), null when unknown; USD at event time.
select
    id,
    symbol as stablecoin,
    stablecoin_id as "stablecoinId",
    chain_id as "chainId",
    chain_name as "chainName",
    event_type as "eventType",
    address,
    amount_decimal as "amountNative",
    case when amount_raw is null then null else amount_raw::varchar end as "amountRaw",
    amount_usd_at_event as "amountUsdAtEvent",
    amount_source as "amountSource",
    amount_status as "amountStatus",
    tx_hash as "txHash",
    block_number::integer as "blockNumber",
    log_index::integer as "logIndex",
    ts::integer as "timestamp",
    methodology_version as "methodologyVersion",
    contract_address as "contractAddress",
    config_key as "configKey",
    event_signature as "eventSignature",
    topic0 as "eventTopic0",
    linked_freeze_event_id as "linkedFreezeEventId",
    frozen_duration_sec::integer as "frozenDurationSec"
from blacklist_events
order by ts desc, id desc
