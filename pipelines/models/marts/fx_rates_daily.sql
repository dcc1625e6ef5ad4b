-- Published FX reference: USD per unit of each currency per working day.
-- grain: one row per date, currency. pk: (date, currency)
select * from int_fx_rates_daily
