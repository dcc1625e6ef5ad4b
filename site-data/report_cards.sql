-- The one row every report-cards artifact reads (report-cards, report-cards-v9, safety-grades,
-- dependency-graph, dependency-scenarios): `cards`, every coin of the report_cards analytic by id with its
-- grades and raw inputs as the analytic wrote them (JSON text); `edges`, the curated dependency edges
-- (registry risk.dependencies; from = upstream coin, to = dependent coin); `newest_price_at`, the newest
-- current-price observation (Unix s) among listed coins: the freshness of the grades' price inputs.
select
    array(
        select {
            'stablecoin_id': stablecoin_id,
            'symbol': symbol,
            'name': name,
            'safety_json': safety_json,
            'report_card_json': report_card_json,
            'raw_inputs_json': raw_inputs_json,
            'coverage_class': coverage_class
        }
        from report_cards
        order by stablecoin_id
    ) as cards,
    array(
        select {'from_id': from_id, 'to_id': to_id, 'weight': weight, 'type': type}
        from dependency_edges
        order by from_id, to_id, type
    ) as edges,
    (select max(price_observed_at)::bigint from price_current) as newest_price_at
