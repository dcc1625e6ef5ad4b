-- Dataset top-stablecoins: every listed coin, largest USD supply first.
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
