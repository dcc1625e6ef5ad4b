-- Newest current-price observation (Unix s) among listed coins: the freshness of the grades' price inputs.
select max(price_observed_at)::bigint as newest_price_at from price_current
