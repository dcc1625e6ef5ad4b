-- Peg references on the as-of day that fell back to a stale FX rate (not used for detection).
select peg_type, reference_usd
from int_peg_references cross join build_context
where day = as_of_day and reference_source = 'fx-fallback'
order by peg_type
