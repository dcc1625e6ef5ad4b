-- source-quality: per coin and UTC day, the sources quoted, the sources outside the agreement window of
-- a slot's consensus, stuck sources and rejected quotes by rule, so every consensus price can be audited.
select
    stablecoin_id as "stablecoinId",
    date,
    judged,
    slots::integer as slots,
    sources_quoted as "sourcesQuoted",
    families_quoted as "familiesQuoted",
    disagreeing_sources as "disagreeingSources",
    stuck_sources as "stuckSources",
    rejected_quotes::integer as "rejectedQuotes",
    rejected_json as "rejectedBySourceAndRule",
    consensus_low as "consensusLow",
    consensus_high as "consensusHigh",
    high_confidence_slots::integer as "highConfidenceSlots"
from source_quality_daily
order by "stablecoinId", date
