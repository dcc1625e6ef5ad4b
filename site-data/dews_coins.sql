-- Every registry coin id and why DEWS does not score it (NAV tokens, floating pegs), for /api/stress-signals 404s.
select id, case when nav_token then 'nav-token' when floating_peg then 'floating-peg' end as excluded_reason
from registry_coins
order by id
