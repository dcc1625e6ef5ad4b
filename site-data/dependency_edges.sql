-- Curated dependency edges (registry risk.dependencies): from = upstream coin, to = dependent coin.
select * from dependency_edges order by from_id, to_id, type
