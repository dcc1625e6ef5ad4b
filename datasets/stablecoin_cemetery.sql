-- Dataset stablecoin-cemetery: dead coins of the registry, most recent death first.
select
    id,
    name,
    symbol,
    llama_id as "llamaId",
    peg_currency as "pegCurrency",
    cause_of_death as "causeOfDeath",
    dead_from as "deathDate"
from registry_coins
where is_dead
order by dead_from desc nulls last, id
