-- Dataset top-stablecoins: every coin of the current list, largest USD supply first. USD supply is the
-- list's value under the one supply valuation rule (same figure as /api/stablecoins); price is the
-- consensus price (null when no usable quote).
select
    stablecoin_id as id,
    symbol,
    name,
    peg_type as "pegType",
    peg_mechanism as "pegMechanism",
    price,
    circulating_usd as "circulatingUsd",
    chain_count as "chainCount",
    array_to_string(cast(json(chains_json) as varchar[]), ';') as chains
from stablecoins
order by circulating_usd desc nulls last, stablecoin_id
