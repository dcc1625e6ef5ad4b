-- Dataset stablecoin-cemetery: dead coins of the registry, most recent death first.
-- No look-ahead: registry_coins judges deaths at the build's as-of (is_dead only when the death's whole
-- stated period ended on or before the as-of day; dead_from and cause_of_death are null otherwise), so a
-- build as of T lists only deaths known at T.
select
    id,
    name,
    symbol,
    llama_id as "llamaId",
    peg_currency as "pegCurrency",
    cause_of_death as "causeOfDeath",
    dead_from as "deathDate"
from registry_coins
where is_dead and dead_from is not null
order by dead_from desc, id
